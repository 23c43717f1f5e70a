"""Accepting submissions: validation, the owner rule, the email rules (recipient allow-list,
quota: ``domain/quota.py``), idempotency and the atomic insert."""

from __future__ import annotations

import logging
from dataclasses import dataclass

from pymongo.errors import DuplicateKeyError

from jobs_common.auth import Identity
from jobs_common.errors import Conflict, Forbidden, NotFound, ValidationFailed
from jobs_common.ids import new_id
from jobs_submission.adapters import metrics
from jobs_submission.adapters.group_insert import GroupInsert
from jobs_submission.adapters.mongo import Document, SubmissionStore
from jobs_submission.app.acceptance import Acceptance
from jobs_submission.domain.documents import SubmissionPublic, new_document, public_view
from jobs_submission.domain.job_types import known_types
from jobs_submission.domain.projects import may_read
from jobs_submission.domain.quota import QuotaExceeded, QuotaWindow, refused_recipients
from jobs_submission.domain.requests import (
    JobRequest,
    dedupe,
    resolve_owner,
    unknown_parents,
    validate_job,
)
from jobs_submission.domain.times import to_ms

log = logging.getLogger(__name__)

_DUPLICATE_RETRIES = 3


@dataclass(frozen=True)
class Accepted:
    job_id: str
    replayed: bool


class SubmissionService:
    def __init__(
        self,
        store: SubmissionStore,
        acceptance: Acceptance | None = None,
        *,
        insert_batch_max: int = 256,
    ) -> None:
        self.store = store
        self.acceptance = acceptance or Acceptance()
        self.inserts = GroupInsert(store.insert_unordered, max_batch=insert_batch_max)

    async def submit(
        self,
        body: object,
        *,
        identity: Identity,
        idempotency_key: str | None,
        trace_id: str,
    ) -> Accepted:
        job_type = body.get("type") if isinstance(body, dict) else None
        try:
            catalog = await known_types(self.acceptance.types, [job_type])
            request = resolve_owner(
                validate_job(body, now=self.acceptance.clock(), catalog=catalog), identity
            )
            if refused := refused_recipients([("", request)], self.acceptance.email.allowed):
                raise ValidationFailed("request validation failed", details=refused)
            await self._check_parents(request)
        except ValidationFailed:
            metrics.SUBMISSIONS.labels(metrics.type_label(job_type), "invalid").inc()
            raise
        except Forbidden:
            metrics.SUBMISSIONS.labels(metrics.type_label(job_type), "forbidden").inc()
            raise
        label = metrics.type_label(request.job_type)
        quota = await self.acceptance.project_quota(identity, request.project_id)
        for _ in range(_DUPLICATE_RETRIES):
            job_id = str(new_id())
            now = self.acceptance.clock()
            window = self.acceptance.email.window(identity, [request], now_ms=to_ms(now))
            document = new_document(
                request,
                job_id=job_id,
                idempotency_key=idempotency_key,
                trace_id=trace_id,
                now=now,
                claim=None
                if self.acceptance.handoff is None
                else self.acceptance.handoff.claim(to_ms(now)),
            )
            try:
                windows = self.acceptance.quota_windows(window, quota, 1, to_ms(now))
                await self._insert(document, windows)
            except QuotaExceeded as over:
                # Without transactions the quota is checked before the insert: a replay
                # of a job accepted earlier is still a replay.
                first = await self._first(request, idempotency_key)
                if first is None or first["requestHash"] != document["requestHash"]:
                    metrics.SUBMISSIONS.labels(label, "over_quota").inc()
                    if over.reason is not None:
                        metrics.THROTTLED.labels(over.reason).inc()
                    raise
                metrics.SUBMISSIONS.labels(label, "replayed").inc()
                return Accepted(job_id=first["_id"], replayed=True)
            except DuplicateKeyError:
                if idempotency_key is None:
                    continue  # a uuid4 collision: draw another id
                first = await self._first(request, idempotency_key)
                if first is None:
                    continue  # the holder vanished between the two calls: try again
                if first["requestHash"] != document["requestHash"]:
                    metrics.SUBMISSIONS.labels(label, "conflict").inc()
                    raise Conflict(
                        "Idempotency-Key was already used with a different request"
                    ) from None
                metrics.SUBMISSIONS.labels(label, "replayed").inc()
                log.info(
                    "idempotent replay",
                    extra={"action": "submission_replayed", "job_id": first["_id"]},
                )
                return Accepted(job_id=first["_id"], replayed=True)
            self.acceptance.accepted(quota, 1)
            metrics.SUBMISSIONS.labels(label, "accepted").inc()
            metrics.JOBS_SUBMITTED.labels(label, metrics.priority_label(request.priority)).inc()
            log.info(
                "job accepted",
                extra={
                    "action": "submission_accepted",
                    "job_id": job_id,
                    "job_type": request.job_type,
                    "trace_id": trace_id,
                },
            )
            if self.acceptance.handoff is None:
                self.acceptance.on_accepted()
            else:
                self.acceptance.handoff.give([document])
            return Accepted(job_id=job_id, replayed=False)
        raise Conflict("could not store the submission; retry the request")

    async def _insert(self, document: Document, windows: list[QuotaWindow]) -> None:
        """The insert, counted against the caller's email quota and its project's daily one
        where ``windows`` has them (in the same transaction: a refused job is not stored, a
        stored job is counted)."""
        if not windows or self.acceptance.quotas is None:
            await self.inserts.insert(document)
            return
        await self.acceptance.quotas.counted(
            windows, lambda session: self.store.insert([document], session=session)
        )

    async def _first(self, request: JobRequest, idempotency_key: str | None) -> Document | None:
        if idempotency_key is None or request.project_id is None:
            return None
        return await self.store.find_by_idempotency_key(
            request.submitted_by, request.project_id, idempotency_key
        )

    async def _check_parents(self, request: JobRequest) -> None:
        """Every parent exists here and belongs to the new job's project (else 422)."""
        if not request.depends_on:
            return
        projects = await self.store.projects_of(request.depends_on)
        fields = [(f"dependsOn.{i}", parent) for i, parent in enumerate(request.depends_on)]
        details = unknown_parents(fields, projects, request.project_id)
        if details:
            raise ValidationFailed("request validation failed", details=dedupe(details))

    async def status(self, job_id: str, *, identity: Identity) -> SubmissionPublic:
        document = await self.store.get(job_id)
        if document is None or not may_read(identity, document):
            raise NotFound("job not found")
        return public_view(document)
