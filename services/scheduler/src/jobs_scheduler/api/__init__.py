"""The scheduler's internal HTTP API: commands on the tables it owns (docs/architecture.md)."""
