"""Batch members that a relay claimed the ordinary way: published only once their batch is
accepted.

A batch's members are stored pending under a claim and handed to the relay in memory after
the batch document says ``accepted`` (:mod:`jobs_submission.app.batches`). A relay that claims
members otherwise (the request's claim ran out, its process died, another replica) looks up
their batches first (one ``_id`` query per pass that claimed members) and, per batch
(:func:`~jobs_submission.domain.outbox.gate_batch_members`): publishes the members of an
accepted batch, gives back those of a batch still being stored with a backoff, holds those of
a batch abandoned while being stored (a replay with its Idempotency-Key reopens them), and
deletes those whose batch document is gone (the request undid it and died halfway). The
writes are fenced by the pass's claim token like every outbox write.
"""

from __future__ import annotations

import logging
from collections import defaultdict
from collections.abc import Sequence

from jobs_submission.adapters.batches import BatchStore
from jobs_submission.adapters.mongo import Document
from jobs_submission.domain.outbox import BatchGate, gate_batch_members, retry_delay_ms
from jobs_submission.settings import Settings

log = logging.getLogger(__name__)


async def publishable(
    claimed: Sequence[Document],
    *,
    token: str,
    batches: BatchStore,
    settings: Settings,
    now_ms: int,
) -> list[Document]:
    """The claimed entries that may be published now, in their order; the members of
    batches that are not accepted are dealt with as the module says."""
    members: dict[str, list[Document]] = defaultdict(list)
    for document in claimed:
        if isinstance(batch_id := document.get("batchId"), str):
            members[batch_id].append(document)
    if not members:
        return list(claimed)
    states = await batches.store.batch_states(members)
    blocked: set[str] = set()
    for batch_id, documents in members.items():
        batch = states.get(batch_id)
        gate = gate_batch_members(
            None if batch is None else str(batch.get("state")),
            batch_created_ms=0 if batch is None else int(batch.get("createdAtMs", 0)),
            now_ms=now_ms,
            abandon_after_ms=int(settings.relay_abandoned_batch_seconds * 1000),
        )
        if gate is BatchGate.PUBLISH:
            continue
        blocked.update(document["_id"] for document in documents)
        await _settle(
            gate,
            batch_id,
            documents,
            token=token,
            batches=batches,
            settings=settings,
            now_ms=now_ms,
        )
    return [document for document in claimed if document["_id"] not in blocked]


async def _settle(
    gate: BatchGate,
    batch_id: str,
    documents: list[Document],
    *,
    token: str,
    batches: BatchStore,
    settings: Settings,
    now_ms: int,
) -> None:
    ids = [document["_id"] for document in documents]
    extra = {"batch_id": batch_id, "count": len(ids)}
    if gate is BatchGate.DROP:
        dropped = await batches.drop_members(ids, token=token)
        log.warning(
            "members of a batch that no longer exists deleted",
            extra={"action": "relay_batch_dropped", **extra, "deleted": dropped},
        )
    elif gate is BatchGate.HOLD:
        await batches.hold_members(ids, token=token)
        log.warning(
            "members of a batch abandoned while being stored held back",
            extra={"action": "relay_batch_held", **extra},
        )
    else:
        attempts = max(int(d.get("outbox", {}).get("attempts", 0)) for d in documents) + 1
        delay = retry_delay_ms(
            attempts,
            base_seconds=settings.relay_retry_base_seconds,
            max_seconds=settings.relay_retry_max_seconds,
        )
        await batches.defer_members(ids, token=token, next_attempt_ms=now_ms + delay)
        log.info(
            "members of a batch not accepted yet given back",
            extra={"action": "relay_batch_waits", **extra, "retry_in_ms": delay},
        )
