"""Recording the jobs of ``JobsSubmitted`` messages: all of a batch at once; when PostgreSQL
refuses the batch, the jobs whose own data no store can hold are split off as poison and the
others recorded without them, so one bad job never takes its neighbours with it.

What is the job's fault, and what is not. The submission API refuses, before it stores
anything, every value PostgreSQL cannot hold: text with a NUL (U+0000) or a lone surrogate
in any field or payload key (``jobs_common.storable_text``; SQLSTATE 22P05 "unsupported
Unicode escape sequence" and 22021 are exactly that NUL), numbers and lengths past the
documented bounds. So a job the API accepted and published can be recorded by construction,
and a refusal of it says something about the platform, not about the job: a database whose
encoding cannot hold a character (22P05/22021 again), a constraint or column the schema
changed, a stored retry policy, a bug. Blaming the job for those would park it as poison
while the API tells its owner it was published, and the job would answer 404 for ever.

So the database's error never convicts a job. A job is poison only when its own values fail
the same pure check the API applies (:func:`unstorable_field`): that can only be a job
accepted before the API refused such input (or by a replica that does not yet), which no
retry can ever record; it is kept in ``poison_messages`` with its body. Any other refusal
aborts the transaction and the consumer's ack policy requeues the message with a growing
pause (one message at a time, so other messages go on), until the database takes it; past
its requeue limit the whole message is stored in ``poison_messages``, never dropped.

The check runs only when a batch was refused: it costs nothing while PostgreSQL accepts.
"""

from __future__ import annotations

import json
import logging
import uuid
from collections import Counter
from collections.abc import Sequence

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common import topology
from jobs_common.contracts import JobSubmitted
from jobs_common.storable_text import first_unstorable
from jobs_scheduler.adapters import logs
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.app.recording import record_submissions
from jobs_scheduler.domain.defaults import JobDefaults

log = logging.getLogger(__name__)


def unstorable_field(job: JobSubmitted) -> str | None:
    """The field of ``job`` whose text no store can hold (a NUL or a lone surrogate), or
    ``None``: the one refusal that is provably the job's own data."""
    texts = {
        "payload": job.payload,
        "type": job.job_type,
        "submittedBy": job.submitted_by,
        "retryPolicyName": job.retry_policy_name,
        "traceId": job.trace_id,
    }
    for name, value in texts.items():
        found = first_unstorable(value)
        if found is not None:
            return found.field(name)
    return None


def kept_body(job: JobSubmitted) -> bytes:
    """The job as JSON bytes whatever it holds (orjson refuses a lone surrogate; ASCII JSON
    escapes it), so that storing it as poison cannot fail on what made it poison. The
    payload is kept as decoded (pydantic's JSON mode would replace a lone surrogate)."""
    document = job.model_dump(mode="json") | {"payload": job.payload}
    return json.dumps(document, separators=(",", ":")).encode("ascii")


async def record_jobs(
    connection: AsyncConnection,
    changes: Changes,
    jobs: Sequence[JobSubmitted],
    defaults: JobDefaults,
) -> Counter[str]:
    """Record ``jobs`` (one statement for the batch); returns applied/duplicate/poison counts.

    Several jobs are recorded under a savepoint, so that the ones whose data no store can
    hold can be split off; a lone job needs none (its failure fails the transaction either
    way, and the ack policy's requeues and limit apply), which saves two round trips for the
    transactions of one job that light load makes."""
    if len(jobs) == 1:
        inserted = await record_submissions(connection, changes, jobs, defaults)
        return Counter(applied=inserted, duplicate=1 - inserted)
    scratch = Changes()
    try:
        async with connection.begin_nested():
            inserted = await record_submissions(connection, scratch, jobs, defaults)
    except Exception:
        refused = {job.job_id: field for job in jobs if (field := unstorable_field(job))}
        if not refused:
            raise  # not provably any job's data: the ack policy requeues the message
        log.warning(
            "batch of submissions refused; recording it without the jobs no store can hold",
            extra={"action": "intake_split", "size": len(jobs), "refused": len(refused)},
            exc_info=True,
        )
        return await _without(connection, changes, jobs, refused, defaults)
    changes.absorb(scratch)
    return Counter(applied=inserted, duplicate=len(jobs) - inserted)


async def _without(
    connection: AsyncConnection,
    changes: Changes,
    jobs: Sequence[JobSubmitted],
    refused: dict[uuid.UUID, str],
    defaults: JobDefaults,
) -> Counter[str]:
    """Record the jobs not in ``refused`` (a refusal now raises: nothing left to blame on a
    job), then store each refused one as poison alone."""
    rest = [job for job in jobs if job.job_id not in refused]
    inserted = await record_submissions(connection, changes, rest, defaults) if rest else 0
    outcomes: Counter[str] = Counter(applied=inserted, duplicate=len(rest) - inserted)
    for job in jobs:
        field = refused.get(job.job_id)
        if field is None:
            continue
        log.error(
            "submitted job holds text no store can keep; stored as poison",
            extra={"action": "poison", "job_id": str(job.job_id), "field": field},
        )
        await logs.record_poison(
            connection,
            queue=topology.SUBMITTED,
            message_id=str(job.message_id),
            reason=(
                f"job {job.job_id} not recorded: {field} holds a NUL (U+0000) or a lone "
                "surrogate, which no store can keep (accepted before the API refused it)"
            ),
            body=kept_body(job),
            headers={} if field == "traceId" else {"trace_id": job.trace_id},
        )
        outcomes["poison"] += 1
    return outcomes
