"""HTTP routes and dependencies."""
