"""The handler SDK under the name it had before it became its own package (``jobs_sdk``):
team modules written ``from jobs_worker.sdk import handler`` keep working. New code imports
``jobs_sdk``, which a team's package can depend on without the worker."""

from jobs_sdk import (
    CancelSignal,
    Cron,
    FailPermanently,
    HandlerConfig,
    HandlerDefinitionError,
    HandlerSpec,
    JobContext,
    JobFailure,
    ResourceSpec,
    RetryLater,
    handler,
    resource,
    resource_of,
    spec_of,
)

__all__ = [
    "CancelSignal",
    "Cron",
    "FailPermanently",
    "HandlerConfig",
    "HandlerDefinitionError",
    "HandlerSpec",
    "JobContext",
    "JobFailure",
    "ResourceSpec",
    "RetryLater",
    "handler",
    "resource",
    "resource_of",
    "spec_of",
]
