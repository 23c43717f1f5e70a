"""The job platform's Python client: ``JobsClient`` (blocking) and ``AsyncJobsClient``
(asyncio), with the same methods, over the gateway's public API.

    from jobs_client import JobsClient

    with JobsClient(email="user@test.com", password="user123") as jobs:
        job = jobs.submit("simulate", {"minSeconds": 0, "maxSeconds": 0})
        print(jobs.wait(job.job_id, timeout=60).result)

The base URL comes from the constructor, else ``JOBS_URL``, else http://127.0.0.1:3000; the
credentials from the constructor (email and password, tokens, a token store), else the
``JOBS_TOKEN`` environment variable. Reference: docs/client.md.
"""

from __future__ import annotations

from jobs_client.async_client import AsyncJobsClient
from jobs_client.auth import TokenStore
from jobs_client.errors import (
    AuthError,
    Conflict,
    FieldError,
    Forbidden,
    JobsError,
    NotFound,
    RateLimited,
    ServerError,
    TransportFailure,
    ValidationError,
    WaitTimeout,
)
from jobs_client.models import (
    TERMINAL_STATUSES,
    Attempt,
    BatchSubmitted,
    CommandAccepted,
    DeadLetter,
    Job,
    JobChange,
    JobProgress,
    JobSpec,
    JobType,
    LogLine,
    Page,
    RequeueAccepted,
    RetryPolicy,
    Schedule,
    Submitted,
    Tokens,
)
from jobs_client.queue_models import ConcurrencyKey, Queue, QueueDepth, RateLimit
from jobs_client.retries import Retries
from jobs_client.session import SessionFile
from jobs_client.sync_client import JobsClient
from jobs_client.version import __version__
from jobs_client.waiting import WaitProgress

__all__ = [
    "TERMINAL_STATUSES",
    "AsyncJobsClient",
    "Attempt",
    "AuthError",
    "BatchSubmitted",
    "CommandAccepted",
    "ConcurrencyKey",
    "Conflict",
    "DeadLetter",
    "FieldError",
    "Forbidden",
    "Job",
    "JobChange",
    "JobProgress",
    "JobSpec",
    "JobType",
    "JobsClient",
    "JobsError",
    "LogLine",
    "NotFound",
    "Page",
    "Queue",
    "QueueDepth",
    "RateLimit",
    "RateLimited",
    "RequeueAccepted",
    "Retries",
    "RetryPolicy",
    "Schedule",
    "ServerError",
    "SessionFile",
    "Submitted",
    "TokenStore",
    "Tokens",
    "TransportFailure",
    "ValidationError",
    "WaitProgress",
    "WaitTimeout",
    "__version__",
]
