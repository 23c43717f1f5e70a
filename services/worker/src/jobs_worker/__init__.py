"""The worker: consumes the ready queues and executes jobs."""
