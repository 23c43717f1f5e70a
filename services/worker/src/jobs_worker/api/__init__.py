"""HTTP surface of the worker: /health, /ready and /metrics only."""
