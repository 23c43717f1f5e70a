"""Connections to the outside: MongoDB and RabbitMQ."""
