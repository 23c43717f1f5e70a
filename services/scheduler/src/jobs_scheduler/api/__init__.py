"""What drives the scheduler: its queues (`queues.py`), its timed sweeps (`sweeps.py`) and the
internal HTTP API of the tables it owns (docs/architecture.md)."""
