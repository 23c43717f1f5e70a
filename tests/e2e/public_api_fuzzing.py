"""Fuzzing the gateway's public OpenAPI with schemathesis against a running stack: every
operation, with valid and with invalid input, as a user of its own. No answer may be a 5xx,
every status must be one the document lists for the operation, bodies and content types must
match it, invalid input must be refused, and an operation called without a token must refuse.

Each operation runs as its own Hypothesis test (driven here rather than through schemathesis'
pytest plugin, so one stack serves them all), and every failure is reported together. The
operations are dealt to ``SHARDS`` test files (``test_public_api_fuzz_part*_e2e.py``), so that the
two processes of ``make test`` share the work."""

from __future__ import annotations

import os
import uuid
from typing import Any

import httpx
import schemathesis
from hypothesis import HealthCheck, given, settings
from hypothesis.errors import Unsatisfiable
from schemathesis import GenerationMode
from schemathesis.checks import not_a_server_error
from schemathesis.specs.openapi.checks import (
    content_type_conformance,
    ignored_auth,
    negative_data_rejection,
    response_schema_conformance,
    status_code_conformance,
)

CHECKS = [
    not_a_server_error,
    status_code_conformance,
    content_type_conformance,
    response_schema_conformance,
    negative_data_rejection,
    ignored_auth,
]
# Examples per operation and mode: `make test` runs 12 (FUZZ_MAX_EXAMPLES; 100 took about 5
# minutes of the two processes' time on 2 cores beside the other e2e files, in four parts, 40
# about 5.7 minutes of test time, and with the rest of the suite kept `make test` near its 20
# minutes); 12 when run alone without it (a minute).
EXAMPLES = int(os.environ.get("FUZZ_MAX_EXAMPLES", "12"))
# negative_data_rejection on that many negative examples only: past them schemathesis 4.32
# "finds" requests it made invalid that HTTP sends as valid ones (a string query parameter
# mutated to a one-item array is serialised as the same string, ``?fingerprint=false``; a
# required header it dropped, ``Authorization``, the test sends anyway), its known false
# positives. Every other check runs on all EXAMPLES.
REJECTION_EXAMPLES = min(EXAMPLES, 12)
DEEP_CHECKS = [check for check in CHECKS if check is not negative_data_rejection]
# How the platform refuses invalid input: the usual 4xx, plus 413 for a body over its route's
# limit (an over-long string can be invalid and too large at once).
REFUSALS = ["400", "401", "403", "404", "405", "409", "413", "415", "422", "429"]


def register_fuzzer(gateway_url: str) -> str:
    """A user of its own, so what the fuzzer creates stays apart from the other tests'."""
    email = f"fuzz-{uuid.uuid4().hex[:10]}@example.com"
    password = "fuzzing-password-0123"
    with httpx.Client(base_url=gateway_url, timeout=30) as client:
        client.post("/auth/register", json={"email": email, "password": password})
        answer = client.post("/auth/login", json={"email": email, "password": password})
    assert answer.status_code == 200, answer.text
    token: str = answer.json()["token"]
    return token


def fuzz(
    operation: Any,
    mode: GenerationMode,
    headers: dict[str, str],
    *,
    examples: int = EXAMPLES,
    checks: list[Any] = CHECKS,
) -> None:
    @given(case=operation.as_strategy(generation_mode=mode))
    @settings(
        max_examples=examples,
        deadline=None,
        suppress_health_check=list(HealthCheck),
        derandomize=True,
        database=None,
    )
    def run(case: Any) -> None:
        case.call_and_validate(headers=headers, checks=checks, timeout=30)

    run()


SHARDS = 4
# The operations that take the longest (10-18 s each alone at 100 examples, against 2-4 s for
# the others: their bodies are the largest, and login and registration hash passwords), one
# per shard, so that the shards take about as long as each other.
HEAVY = ("POST /api/batches", "POST /api/jobs", "POST /auth/login", "POST /auth/register")


def shard_of(labels: list[str]) -> dict[str, int]:
    """Each operation's shard: the heavy ones dealt first, then the others in turn."""
    heavy = [label for label in labels if label in HEAVY]
    light = [label for label in labels if label not in HEAVY]
    return {label: index % SHARDS for index, label in enumerate(heavy + light)}


def fuzz_shard(gateway_url: str, shard: int) -> None:
    """Fuzz the ``shard``-th share of the document's operations (:func:`shard_of`); fails
    with every failure found."""
    with httpx.Client(base_url=gateway_url, timeout=30) as client:
        document = client.get("/openapi.json").json()
    config = schemathesis.Config.from_dict(
        {
            "checks": {"negative_data_rejection": {"expected-statuses": REFUSALS}},
            # The API ignores query parameters and headers it does not declare (as HTTP APIs
            # do): an unknown one is not invalid input, so it is not generated as such.
            "generation": {"allow-extra-parameters": False},
        }
    )
    schema = schemathesis.openapi.from_dict(document, config=config)
    schema.config.update(base_url=gateway_url)
    headers = {"Authorization": f"Bearer {register_fuzzer(gateway_url)}"}
    failures: list[str] = []
    operations = 0
    every = [result.ok() for result in schema.get_all_operations()]
    shards = shard_of([operation.label for operation in every])
    for operation in every:
        if shards[operation.label] != shard:
            continue
        operations += 1
        passes: list[tuple[GenerationMode, dict[str, Any]]] = [
            (GenerationMode.POSITIVE, {}),
            (GenerationMode.NEGATIVE, {"checks": DEEP_CHECKS}),
        ]
        if REJECTION_EXAMPLES < EXAMPLES:
            passes.append((GenerationMode.NEGATIVE, {"examples": REJECTION_EXAMPLES}))
        else:
            passes[1] = (GenerationMode.NEGATIVE, {})
        for mode, options in passes:
            try:
                fuzz(operation, mode, headers, **options)
            except Unsatisfiable:
                assert mode is GenerationMode.NEGATIVE  # nothing to make invalid (GET /health)
            except BaseException as failure:  # schemathesis raises a FailureGroup
                failures.append(f"{operation.label} [{mode.value}]: {failure}"[:3000])
    assert operations >= 30 // SHARDS
    assert not failures, "\n\n".join(failures)
