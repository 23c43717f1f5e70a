"""Scheduler service: authoritative job state in PostgreSQL."""
