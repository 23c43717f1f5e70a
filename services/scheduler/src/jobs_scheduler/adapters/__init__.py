"""I/O adapters of the scheduler."""
