"""Accepting batches: validate every spec, check parents, then store the batch durably.

Write protocol (one batch doc, one bulk insert, one flip; no write per member after the insert):

1. insert the ``batches`` document with ``state: pending`` (it takes the Idempotency-Key);
2. ``insert_many`` every member, pending and claimed for the relay lease (by this process's
   relay when it has one), so no relay takes them while the batch is stored;
3. flip the batch document to ``state: accepted``;
4. hand the members to this process's relay in memory, or, when the claim may have run out
   meanwhile (half the lease gone, or a resumed batch), reopen them for any relay.

A relay that claims batch members the ordinary way publishes them only once their batch is
accepted (:mod:`jobs_submission.app.batch_gate`), so a failure before 3 publishes nothing. A retry
with the same Idempotency-Key resumes it (same batch id and job ids; members already stored are
skipped); without a key the request undoes what it wrote. Only an accepted batch is visible.
"""

from __future__ import annotations

import logging
from collections import Counter
from dataclasses import dataclass

from pymongo.errors import DuplicateKeyError

from jobs_common.auth import Identity
from jobs_common.errors import Conflict, Forbidden, NotFound, ValidationFailed
from jobs_common.ids import new_id
from jobs_submission.adapters import metrics
from jobs_submission.adapters.batches import BatchStore
from jobs_submission.adapters.mongo import Document, SubmissionStore
from jobs_submission.app.acceptance import Acceptance
from jobs_submission.domain.batches import BatchRequest, validate_batch
from jobs_submission.domain.documents import (
    BATCH_ACCEPTED,
    BatchStatusPublic,
    batch_view,
    new_batch_document,
    new_document,
)
from jobs_submission.domain.job_types import known_types, named_types
from jobs_submission.domain.projects import may_read
from jobs_submission.domain.quota import QuotaExceeded, refused_recipients
from jobs_submission.domain.requests import dedupe, unknown_parents
from jobs_submission.domain.times import to_ms

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class BatchAcceptance:
    batch_id: str
    job_ids: list[str]
    replayed: bool


class BatchService:
    def __init__(
        self,
        submissions: SubmissionStore,
        batches: BatchStore,
        acceptance: Acceptance | None = None,
        *,
        claim_lease_ms: int = 30_000,
    ) -> None:
        self.submissions = submissions
        self.claim_lease_ms = claim_lease_ms
        self.batches = batches
        self.acceptance = acceptance or Acceptance()

    async def submit(
        self,
        body: object,
        *,
        identity: Identity,
        idempotency_key: str | None,
        trace_id: str,
    ) -> BatchAcceptance:
        now = self.acceptance.clock()
        try:
            catalog = await known_types(self.acceptance.types, named_types(body))
            request = validate_batch(body, identity=identity, now=now, catalog=catalog)
            members = [(f"jobs.{i}.", spec) for i, spec in enumerate(request.specs)]
            if refused := refused_recipients(members, self.acceptance.email.allowed):
                raise ValidationFailed("batch validation failed", details=refused)
            await self._check_parents(request)
        except ValidationFailed:
            metrics.BATCHES.labels("invalid").inc()
            raise
        except Forbidden:
            metrics.BATCHES.labels("forbidden").inc()
            raise
        batch_id = str(new_id())
        job_ids = [str(new_id()) for _ in request.specs]
        batch_doc = new_batch_document(
            batch_id=batch_id,
            submitted_by=request.submitted_by,
            project_id=request.project_id,
            name=request.name,
            job_ids=job_ids,
            idempotency_key=idempotency_key,
            request_hash=request.request_hash(),
            trace_id=trace_id,
            now=now,
        )
        # The batch's email members count against the caller's quota in the transaction that
        # stores the batch document (quota.py): a replay stores no batch and counts nothing.
        # So does the whole batch against its project's quotas: accepted whole or refused.
        window = self.acceptance.email.window(identity, request.specs, now_ms=to_ms(now))
        quota = await self.acceptance.project_quota(identity, request.project_id)
        try:
            windows = self.acceptance.quota_windows(window, quota, request.size, to_ms(now))
            if not windows or self.acceptance.quotas is None:
                await self.batches.insert_batch(batch_doc)
            else:
                await self.acceptance.quotas.counted(
                    windows, lambda session: self.batches.insert_batch(batch_doc, session=session)
                )
        except QuotaExceeded as over:
            first = None
            if idempotency_key is not None:  # checked before the insert without transactions
                first = await self.batches.find_by_idempotency_key(
                    request.submitted_by, request.project_id, idempotency_key
                )
            if first is None:
                metrics.BATCHES.labels("over_quota").inc()
                if over.reason is not None:
                    metrics.THROTTLED.labels(over.reason).inc(request.size)
                raise
            return await self._replay(request, batch_doc, idempotency_key or "", trace_id)
        except DuplicateKeyError:
            if idempotency_key is None:
                raise  # a uuid4 collision on the batch id; the client retries
            return await self._replay(request, batch_doc, idempotency_key, trace_id)
        try:
            await self._store_members(request, batch_doc, trace_id=trace_id, resume=False)
        except Exception:
            log.exception(
                "batch members could not be stored",
                extra={"action": "batch_store_failed", "batch_id": batch_id},
            )
            if idempotency_key is None:
                await self.batches.discard(batch_id)
            raise
        self.acceptance.accepted(quota, request.size)
        metrics.BATCHES.labels("accepted").inc()
        for job_type, count in Counter(spec.job_type for spec in request.specs).items():
            metrics.SUBMISSIONS.labels(metrics.type_label(job_type), "accepted").inc(count)
        for (job_type, priority), count in Counter(
            (spec.job_type, spec.priority) for spec in request.specs
        ).items():
            label = metrics.type_label(job_type), metrics.priority_label(priority)
            metrics.JOBS_SUBMITTED.labels(*label).inc(count)
        log.info(
            "batch accepted",
            extra={
                "action": "batch_accepted",
                "batch_id": batch_id,
                "size": request.size,
                "trace_id": trace_id,
            },
        )
        return BatchAcceptance(batch_id=batch_id, job_ids=job_ids, replayed=False)

    async def _replay(
        self, request: BatchRequest, attempted: Document, key: str, trace_id: str
    ) -> BatchAcceptance:
        first = await self.batches.find_by_idempotency_key(
            request.submitted_by, request.project_id, key
        )
        if first is None:
            raise Conflict("the batch with this Idempotency-Key vanished; retry the request")
        if first["requestHash"] != attempted["requestHash"]:
            metrics.BATCHES.labels("conflict").inc()
            raise Conflict("Idempotency-Key was already used with a different request")
        if first.get("state") != BATCH_ACCEPTED:
            # a request that failed (or still runs) left it pending: complete it idempotently
            await self._store_members(request, first, trace_id=trace_id, resume=True)
            log.info(
                "pending batch resumed",
                extra={"action": "batch_resumed", "batch_id": first["_id"]},
            )
        metrics.BATCHES.labels("replayed").inc()
        return BatchAcceptance(batch_id=first["_id"], job_ids=list(first["jobIds"]), replayed=True)

    async def _store_members(
        self, request: BatchRequest, batch_doc: Document, *, trace_id: str, resume: bool
    ) -> None:
        batch_id, job_ids = batch_doc["_id"], list(batch_doc["jobIds"])
        now = self.acceptance.clock()
        claim = self._claim(batch_id, to_ms(now))
        parents = request.resolve(job_ids)
        members = [
            new_document(
                spec,
                job_id=job_ids[i],
                idempotency_key=None,
                trace_id=trace_id,
                now=now,
                depends_on=parents[i],
                batch=(batch_id, request.size),
                claim=claim,
            )
            for i, spec in enumerate(request.specs)
        ]
        await self.batches.insert_members(members, resume=resume)
        await self.batches.mark_accepted(batch_id, now_ms=to_ms(now))
        accepted_ms = to_ms(self.acceptance.clock())
        # No relay claims a member before its claim ran out; until half of it is gone no
        # relay can have claimed one and found the batch still pending (clocks may differ).
        # A resumed batch's members were stored by an earlier request, under other claims.
        in_time = accepted_ms < claim[1] - self.lease_ms // 2
        if self.acceptance.handoff is None or resume or not in_time:
            await self.batches.reopen_members(
                batch_id, token=claim[0], now_ms=accepted_ms, earlier=resume
            )
            self.acceptance.on_accepted()
            return
        self.acceptance.handoff.give(members)

    def _claim(self, batch_id: str, now_ms: int) -> tuple[str, int]:
        """The claim the members are stored under: this process's relay's, else the batch's
        own (no relay holds that token; reopening the members ends it)."""
        if self.acceptance.handoff is not None:
            return self.acceptance.handoff.claim(now_ms)
        return f"batch-{batch_id}", now_ms + self.lease_ms

    @property
    def lease_ms(self) -> int:
        return (
            self.acceptance.handoff.lease_ms
            if self.acceptance.handoff is not None
            else self.claim_lease_ms
        )

    async def _check_parents(self, request: BatchRequest) -> None:
        parents = request.absolute_parents()
        if not parents:
            return
        projects = await self.submissions.projects_of([job_id for _, job_id in parents])
        details = unknown_parents(parents, projects, request.project_id)
        if details:
            raise ValidationFailed("batch validation failed", details=dedupe(details))

    async def status(self, batch_id: str, *, identity: Identity) -> BatchStatusPublic:
        document = await self.batches.get(batch_id)
        if (
            document is None
            or document.get("state") != BATCH_ACCEPTED
            or not may_read(identity, document)
        ):
            raise NotFound("batch not found")
        return batch_view(document, published=await self.batches.count_published(batch_id))
