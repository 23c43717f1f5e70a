"""The built-in job types, written with the handler SDK (``jobs_worker.sdk``) like any
team's own, and found the same way: through the ``jobs_platform.handlers`` entry points of
this distribution (pyproject.toml)."""
