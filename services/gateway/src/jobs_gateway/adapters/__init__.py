"""PostgreSQL users and the upstream HTTP client."""
