"""The job platform's Python client: ``JobsClient`` (blocking) and ``AsyncJobsClient``
(asyncio), with the same methods, over the gateway's public API.

    from jobs_client import JobsClient

    with JobsClient(email="user@test.com", password="user123") as jobs:
        job = jobs.submit("simulate", {"minSeconds": 0, "maxSeconds": 0})
        print(jobs.wait(job.job_id, timeout=60).result)

Typed: ``reverse = task("acme.reverse", Reverse, Reversed)``, then
``jobs.submit(reverse, Reverse(text="x")).result(timeout=60)`` is a ``Reversed`` (or raises
``JobFailed`` / ``JobCancelled``); ``jobs.submit(chain(a.s(x), b.s(y)))`` submits one batch
whose steps run one after the other.

The base URL comes from the constructor, else ``JOBS_URL``, else http://127.0.0.1:3000; the
credentials from the constructor (email and password, tokens, a token store), else the
``JOBS_TOKEN`` environment variable. Reference: docs/client.md.
"""

from __future__ import annotations

from jobs_client.async_client import AsyncJobsClient
from jobs_client.async_handles import AsyncBatchHandle, AsyncJobHandle
from jobs_client.auth import TokenStore
from jobs_client.canvas import Canvas, chain, chord, group
from jobs_client.errors import (
    AuthError,
    Conflict,
    FieldError,
    Forbidden,
    JobCancelled,
    JobFailed,
    JobsError,
    NotFound,
    RateLimited,
    ResultInvalid,
    ServerError,
    TransportFailure,
    ValidationError,
    WaitTimeout,
)
from jobs_client.handles import BatchHandle, JobHandle
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
from jobs_client.tasks import Signature, Task, task, task_of
from jobs_client.version import __version__
from jobs_client.waiting import WaitProgress

__all__ = [
    "TERMINAL_STATUSES",
    "AsyncBatchHandle",
    "AsyncJobHandle",
    "AsyncJobsClient",
    "Attempt",
    "AuthError",
    "BatchHandle",
    "BatchSubmitted",
    "Canvas",
    "CommandAccepted",
    "ConcurrencyKey",
    "Conflict",
    "DeadLetter",
    "FieldError",
    "Forbidden",
    "Job",
    "JobCancelled",
    "JobChange",
    "JobFailed",
    "JobHandle",
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
    "ResultInvalid",
    "Retries",
    "RetryPolicy",
    "Schedule",
    "ServerError",
    "SessionFile",
    "Signature",
    "Submitted",
    "Task",
    "TokenStore",
    "Tokens",
    "TransportFailure",
    "ValidationError",
    "WaitProgress",
    "WaitTimeout",
    "__version__",
    "chain",
    "chord",
    "group",
    "task",
    "task_of",
]
