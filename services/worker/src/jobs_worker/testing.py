"""``jobs_sdk.testing`` under the name it had before the SDK became its own package."""

from jobs_sdk.testing import HandlerRun, run, run_async

__all__ = ["HandlerRun", "run", "run_async"]
