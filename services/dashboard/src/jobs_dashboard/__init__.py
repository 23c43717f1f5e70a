"""Dashboard: read API over the PostgreSQL job store and operator commands over RabbitMQ."""
