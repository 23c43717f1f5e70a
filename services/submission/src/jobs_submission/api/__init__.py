"""HTTP layer: routes, schemas and dependencies."""
