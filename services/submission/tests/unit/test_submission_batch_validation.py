"""Batch validation: every spec's errors with its path, owners, refs and cycle detection."""

from __future__ import annotations

import uuid
from datetime import UTC, datetime
from functools import partial
from typing import Any

import pytest

from jobs_common.auth import Identity
from jobs_common.errors import Forbidden, ValidationFailed
from jobs_submission.domain.batches import (
    BatchRequest,
    check_refs,
    find_cycles,
)
from jobs_submission.domain.batches import (
    validate_batch as validate_batch_in,
)

from .conftest import BUILTINS

pytestmark = pytest.mark.unit

validate_batch = partial(validate_batch_in, catalog=BUILTINS)

NOW = datetime(2026, 6, 1, 12, 0, tzinfo=UTC)
USER = Identity(user_id="u1", email="user@test.com", role="user")
ADMIN = Identity(user_id="a1", email="admin@test.com", role="admin")


def spec(**extra: Any) -> dict[str, Any]:
    return {"type": "simulate", "priority": 1, "payload": {}, **extra}


def batch(*specs: dict[str, Any], identity: Identity = USER, **extra: Any) -> BatchRequest:
    return validate_batch({"jobs": list(specs), **extra}, identity=identity, now=NOW)


def errors(data: object, identity: Identity = USER) -> dict[str, str]:
    with pytest.raises(ValidationFailed) as caught:
        validate_batch(data, identity=identity, now=NOW)
    return {d.field: d.message for d in caught.value.details}


def test_a_valid_batch_resolves_refs_to_the_generated_ids() -> None:
    parent = str(uuid.uuid4())
    request = batch(
        spec(ref="extract"),
        spec(ref="transform", dependsOn=["ref:extract"]),
        spec(dependsOn=["ref:transform", "ref:extract", parent], delaySeconds=60),
        name="etl",
    )
    assert request.size == 3 and request.name == "etl"
    assert request.submitted_by == "user@test.com"
    ids = ["id-0", "id-1", "id-2"]
    assert request.resolve(ids) == [[], ["id-0"], ["id-1", "id-0", parent]]
    assert request.absolute_parents() == [("jobs.2.dependsOn.2", parent)]


def test_every_invalid_spec_is_reported_with_its_index() -> None:
    fields = errors(
        {
            "jobs": [
                spec(),
                spec(priority=9),
                {"type": "email", "priority": 1, "payload": {"to": "x", "subject": "s"}},
                spec(runAt="2026-06-02T00:00:00"),
                spec(batchId=str(uuid.uuid4())),
            ]
        }
    )
    assert set(fields) == {
        "jobs.1.priority",
        "jobs.2.payload.to",
        "jobs.2.payload.body",
        "jobs.3.runAt",
        "jobs.4.batchId",
    }


@pytest.mark.parametrize(
    ("data", "field"),
    [
        ({"jobs": []}, "jobs"),
        ({}, "jobs"),
        ({"jobs": "nope"}, "jobs"),
        ([spec()], "body"),
        ({"jobs": [spec()], "name": ""}, "name"),
        ({"jobs": [spec()], "extra": 1}, "extra"),
        ({"jobs": [spec()] * 10_001}, "jobs"),
    ],
)
def test_envelope_errors(data: object, field: str) -> None:
    assert field in errors(data)


def test_envelope_and_spec_errors_come_together() -> None:
    assert set(errors({"jobs": [spec(priority=0)], "name": ""})) == {"name", "jobs.0.priority"}


def test_ten_thousand_specs_are_accepted() -> None:
    request = batch(*[spec(ref=f"r{i}") for i in range(10_000)])
    assert request.size == 10_000


def test_owners_default_to_the_caller_and_must_match_the_batch() -> None:
    assert batch(spec(submittedBy="USER@test.com")).specs[0].submitted_by == "user@test.com"
    fields = errors({"jobs": [spec(), spec(submittedBy="other@test.com")]})
    assert fields == {"jobs.1.submittedBy": "must equal the batch's submittedBy"}
    with pytest.raises(Forbidden):
        batch(spec(), submittedBy="other@test.com")
    for_other = batch(
        spec(submittedBy="other@test.com"), identity=ADMIN, submittedBy="other@test.com"
    )
    assert {s.submitted_by for s in for_other.specs} == {"other@test.com"}
    assert for_other.submitted_by == "other@test.com"


def test_duplicate_unknown_and_self_refs() -> None:
    fields = errors(
        {
            "jobs": [
                spec(ref="a"),
                spec(ref="a"),
                spec(dependsOn=["ref:ghost"]),
                spec(ref="me", dependsOn=["ref:me"]),
                spec(dependsOn=["ref:has space"]),
            ]
        }
    )
    assert fields == {
        "jobs.1.ref": "duplicate ref in batch",
        "jobs.2.dependsOn": "unknown ref 'ghost'",
        "jobs.3.dependsOn": "a job cannot depend on itself",
        "jobs.4.dependsOn.0": "ref:<label> needs a label of letters, digits and _.:-",
    }


def test_a_cycle_reports_exactly_its_specs() -> None:
    fields = errors(
        {
            "jobs": [
                spec(ref="a", dependsOn=["ref:c"]),
                spec(ref="b", dependsOn=["ref:a"]),
                spec(ref="c", dependsOn=["ref:b"]),
                spec(ref="downstream", dependsOn=["ref:c"]),  # blocked by the cycle, not in it
                spec(ref="free"),
            ]
        }
    )
    message = "dependency cycle among jobs.0, jobs.1, jobs.2"
    assert fields == {f"jobs.{i}.dependsOn": message for i in range(3)}


def test_an_invalid_spec_still_provides_its_ref() -> None:
    fields = errors({"jobs": [spec(ref="a", priority=0), spec(dependsOn=["ref:a"])]})
    assert fields == {"jobs.0.priority": "Input should be greater than or equal to 1"}


def test_refs_from_raw_specs() -> None:
    assert check_refs([spec(ref="x"), spec(dependsOn=["ref:x"]), "junk", {"dependsOn": 3}]) == []


def test_find_cycles() -> None:
    assert find_cycles(3, {}) == []
    assert find_cycles(3, {1: [0], 2: [1, 0]}) == []  # a DAG
    assert find_cycles(2, {0: [1], 1: [0]}) == [[0, 1]]
    # two separate cycles, a node between them, and a long chain hanging off one
    edges = {0: [1], 1: [0], 2: [1, 3], 3: [4], 4: [3], 5: [4]}
    assert sorted(find_cycles(6, edges)) == [[0, 1], [3, 4]]
    # a long cycle is found without recursion limits
    size = 5_000
    ring = {i: [(i + 1) % size] for i in range(size)}
    assert find_cycles(size, ring) == [list(range(size))]


def test_batch_hash_covers_specs_order_name_and_owner() -> None:
    a = batch(spec(), spec(priority=2), name="n").request_hash()
    assert a == batch(spec(), spec(priority=2), name="n").request_hash()
    assert a != batch(spec(priority=2), spec(), name="n").request_hash()
    assert a != batch(spec(), spec(priority=2), name="m").request_hash()
    assert a != batch(spec(), spec(priority=2), name="n", identity=ADMIN).request_hash()
