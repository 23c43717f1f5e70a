"""Adapters to the outside: the PostgreSQL job store (read only) and RabbitMQ commands."""
