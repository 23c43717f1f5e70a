"""Claims of redelivered attempts (``JobRunning`` with ``redelivered``): load the jobs'
rows locked and the read horizon, decide each claim (``domain/claims.py``), start or take
over the attempts granted through the status writer, and answer every claimant with a
``ClaimVerdict`` through the outbox (sent once this transaction commits)."""

from __future__ import annotations

from collections.abc import Sequence
from datetime import timedelta

from sqlalchemy.ext.asyncio import AsyncConnection

from jobs_common.contracts import ClaimVerdict, JobRunning, JobStatus
from jobs_scheduler.adapters import horizons, job_writes, jobs
from jobs_scheduler.adapters.side_rows import Changes
from jobs_scheduler.adapters.status import Transition, Write, apply_transitions
from jobs_scheduler.domain.claims import Claim, claim_verdict
from jobs_scheduler.domain.defaults import JobDefaults

S = JobStatus

# The job's timeline (phrased as jobs_common.disclosure expects: owners read "a worker").
_TIMELINE = {
    "start": "claimed; started on {worker}",
    "take_over": "redelivered; taken over by {worker}",
}
_WRITES: dict[str, tuple[JobStatus, Write]] = {
    "start": (S.QUEUED, job_writes.START),
    "take_over": (S.RUNNING, job_writes.TAKE_OVER),
}


def _answer(changes: Changes, claim: JobRunning, decided: Claim) -> None:
    changes.answer_claim(
        ClaimVerdict(
            job_id=claim.job_id,
            attempt=claim.attempt,
            worker_id=claim.worker_id,
            verdict=decided.verdict,
            reason=decided.reason[:500],
            retry_after=decided.retry_after,
            trace_id=claim.trace_id,
        )
    )


async def answer_claims(
    connection: AsyncConnection,
    changes: Changes,
    claims: Sequence[JobRunning],
    defaults: JobDefaults,
) -> list[JobRunning]:
    """Decide and answer ``claims`` (one per attempt); returns the ones granted, whose
    attempt now runs on the claimant (the caller records the attempt rows' start)."""
    if not claims:
        return []
    rows = await jobs.lock_claimed(connection, [c.job_id for c in claims])
    horizon = await horizons.current(connection, stale_after=defaults.horizon_stale_seconds)
    lease = timedelta(seconds=defaults.lease_seconds)
    granted: list[JobRunning] = []
    for claim in sorted(claims, key=lambda c: c.job_id):
        row = rows.get(claim.job_id)
        decided = claim_verdict(
            attempt=claim.attempt,
            claimant=claim.worker_id,
            claim_since=claim.claim_since,
            status=row.status if row is not None else None,
            current_attempt=row.attempt if row is not None else None,
            holder=row.worker_id if row is not None else None,
            lease_expires_at=row.lease_expires_at if row is not None else None,
            horizon=horizon,
            lease=lease,
        )
        if decided.write is not None:
            source, write = _WRITES[decided.write]
            applied = await apply_transitions(
                connection,
                changes,
                [
                    Transition(
                        claim.job_id,
                        source,
                        S.RUNNING,
                        _TIMELINE[decided.write].format(worker=claim.worker_id),
                        attempt=claim.attempt,
                        values={"worker_id": claim.worker_id, "started_at": claim.started_at},
                    )
                ],
                write,
                job_writes.lease_params(defaults),
            )
            if (claim.job_id, claim.attempt) not in applied:  # e.g. its cancel was asked
                decided = Claim("wait", "the record changed; ask again", retry_after=1.0)
        if decided.verdict == "run":
            granted.append(claim)
        _answer(changes, claim, decided)
    return granted
