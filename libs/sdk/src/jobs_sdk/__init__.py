"""The handler SDK: what a team's handler package imports (pydantic is its one dependency).

    from jobs_sdk import FailPermanently, JobContext, RetryLater, handler

docs/sdk.md is the reference; ``jobs_sdk.testing`` runs a handler in a unit test.
"""

from jobs_sdk.config import HandlerConfig
from jobs_sdk.context import CancelSignal, HandlerSpec, JobContext
from jobs_sdk.declare import (
    HandlerDefinitionError,
    ResourceSpec,
    handler,
    resource,
    resource_of,
    spec_of,
)
from jobs_sdk.errors import FailPermanently, JobFailure, RetryLater
from jobs_sdk.follow_ups import FollowUp, SubmitRefused, Submitter, SubmitUnavailable
from jobs_sdk.parents import ParentResults, ParentResultTooLarge
from jobs_sdk.schedules import Cron

__all__ = [
    "CancelSignal",
    "Cron",
    "FailPermanently",
    "FollowUp",
    "HandlerConfig",
    "HandlerDefinitionError",
    "HandlerSpec",
    "JobContext",
    "JobFailure",
    "ParentResultTooLarge",
    "ParentResults",
    "ResourceSpec",
    "RetryLater",
    "SubmitRefused",
    "SubmitUnavailable",
    "Submitter",
    "handler",
    "resource",
    "resource_of",
    "spec_of",
]
