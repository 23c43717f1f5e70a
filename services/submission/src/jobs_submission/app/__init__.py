"""The submission service's use cases: accepting submissions and batches, the job type
registry, the outbox relay with its hand-off, batch gate and marking of what was sent."""
