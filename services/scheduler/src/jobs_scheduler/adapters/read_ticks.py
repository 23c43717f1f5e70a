"""The read-horizon ticks this replica publishes into the queues it consumes.

A tick is a watermark (see :mod:`jobs_scheduler.domain.leases`): published every
``tick_interval_seconds`` with the replica's clock, it reaches a consumer only after every
message queued before it. While this replica is paused or its broker connection is down, no
tick is sent, so no horizon moves on its account.
"""

from __future__ import annotations

import asyncio
import logging

from jobs_common.contracts import ReadTick, utcnow
from jobs_common.rabbit import Publisher
from jobs_scheduler.adapters import metrics
from jobs_scheduler.adapters.horizons import TICKED_QUEUES

log = logging.getLogger(__name__)


async def publish_ticks(publisher: Publisher, replica_id: str) -> int:
    """One confirmed tick into each ticked queue. Returns 0: a tick is never a full batch."""
    tick = ReadTick(replica_id=replica_id, sent_at=utcnow())
    outcomes = await asyncio.gather(
        *(publisher.publish(queue, tick) for queue in TICKED_QUEUES), return_exceptions=True
    )
    failed = [o for o in outcomes if isinstance(o, BaseException)]
    if failed:
        metrics.TICKS.labels("failed").inc(len(failed))
        log.warning(
            "read ticks not confirmed",
            extra={"action": "tick_failed", "failed": len(failed), "error": repr(failed[0])},
        )
    metrics.TICKS.labels("sent").inc(len(outcomes) - len(failed))
    return 0
