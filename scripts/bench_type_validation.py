"""How fast the submission service checks payloads: ``python scripts/bench_type_validation.py``.

Times the check of N (10,000) ``simulate`` payloads, as the load generator sends them, by the
registry's path (the schema the worker announces, compiled once: what a submission runs) and,
for comparison, by the handler's pydantic model (validate then dump, the path built-in types
took before the registry served them). Figures only; best of three runs.
"""

from __future__ import annotations

import os
import random
import time
from collections.abc import Callable
from typing import Any

from jobs_common.contracts import utcnow
from jobs_submission.adapters.job_types import type_document
from jobs_submission.domain.job_types import AnnouncedType, TypeCatalog
from jobs_testing.builtin_types import builtin_types
from jobs_worker.handlers.payloads import SimulatePayload


def payloads(n: int) -> list[dict[str, Any]]:
    rng = random.Random(1)
    return [
        {
            "immediateFailureRate": 0,
            "failureRate": round(rng.random(), 3),
            "minSeconds": 0,
            "maxSeconds": rng.randint(0, 5),
            "seed": i,
        }
        for i in range(n)
    ]


def best_of_three(check: Callable[[dict[str, Any]], object], batch: list[dict[str, Any]]) -> float:
    best = float("inf")
    for _ in range(3):
        started = time.perf_counter()
        for payload in batch:
            check(payload)
        best = min(best, time.perf_counter() - started)
    return best


def main() -> None:
    n = int(os.environ.get("N", "10000"))
    batch = payloads(n)
    catalog = TypeCatalog(
        {
            info.job_type: AnnouncedType.of({"_id": info.job_type, **type_document(info, utcnow())})
            for info in builtin_types()
        }
    )

    def registry(payload: dict[str, Any]) -> object:
        checked, problems = catalog.check_payload("simulate", payload, at="payload")
        assert checked is not None, problems
        return checked

    def model(payload: dict[str, Any]) -> object:
        return SimulatePayload.model_validate(payload).model_dump(mode="json", by_alias=True)

    for name, check in (("registry schema", registry), ("pydantic model", model)):
        seconds = best_of_three(check, batch)
        print(f"{name:>16}: {seconds * 1000:7.1f} ms for {n} payloads ({n / seconds:,.0f}/s)")


if __name__ == "__main__":
    main()
