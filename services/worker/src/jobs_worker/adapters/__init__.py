"""The worker's I/O: artifact files, SMTP, the read-only job store, RabbitMQ consumers."""
