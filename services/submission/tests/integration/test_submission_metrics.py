"""The submission service's part of the metric catalogue: accepted jobs by type and priority
(single submissions and batch members, replays not again), its outbox backlog and its HTTP
requests by route template, read back from its own /metrics."""

from __future__ import annotations

import pytest
from prometheus_client.parser import text_string_to_metric_families

from .conftest import EMAIL_JOB, AppFactory, RunningApp

pytestmark = pytest.mark.integration


async def scrape(app: RunningApp) -> dict[tuple[str, frozenset[tuple[str, str]]], float]:
    text = (await app.client.get("/metrics")).text
    return {
        (sample.name, frozenset(sample.labels.items())): sample.value
        for family in text_string_to_metric_families(text)
        for sample in family.samples
    }


def submitted(samples: dict[tuple[str, frozenset[tuple[str, str]]], float], **labels: str) -> float:
    return samples.get(("jobs_submitted_total", frozenset(labels.items())), 0.0)


async def test_accepted_jobs_are_counted_by_type_and_priority(app_factory: AppFactory) -> None:
    async with app_factory() as app:
        before = await scrape(app)
        first = await app.submit(key="once")  # email, priority 2
        replay = await app.submit(key="once")  # the same job again: not counted again
        assert first.status_code == replay.status_code == 202
        assert first.json()["jobId"] == replay.json()["jobId"]
        assert (await app.submit({**EMAIL_JOB, "priority": 3})).status_code == 202
        assert (await app.submit({**EMAIL_JOB, "priority": 7})).status_code == 422  # invalid
        batch = {
            "jobs": [
                {"type": "simulate", "priority": 1, "payload": {"minSeconds": 0}},
                {"type": "simulate", "priority": 1, "payload": {"minSeconds": 0}},
                {**EMAIL_JOB, "priority": 3},
            ]
        }
        assert (await app.submit_batch(batch)).status_code == 202
        after = await scrape(app)

    def added(**labels: str) -> float:
        return submitted(after, **labels) - submitted(before, **labels)

    assert added(type="email", priority="medium") == 1
    assert added(type="email", priority="high") == 2
    assert added(type="simulate", priority="low") == 2
    assert added(type="simulate", priority="high") == 0


async def test_outbox_pending_and_http_requests_by_route(app_factory: AppFactory) -> None:
    async with app_factory() as app:
        before = await scrape(app)
        accepted = await app.submit()
        assert accepted.status_code == 202
        job_id = accepted.json()["jobId"]
        status = await app.client.get(f"/api/v1/jobs/{job_id}/status", headers=app.headers())
        assert status.status_code == 200
        after = await scrape(app)
    assert ("outbox_pending", frozenset({("service", "submission")})) in after

    def added(name: str, **labels: str) -> float:
        key = (name, frozenset(labels.items()))
        return after.get(key, 0.0) - before.get(key, 0.0)

    post = {"route": "/api/v1/jobs", "method": "POST"}
    get = {"route": "/api/v1/jobs/{jobId}/status", "method": "GET"}
    assert added("http_requests_total", **post, status="202") == 1
    assert added("http_requests_total", **get, status="200") == 1
    assert added("http_request_duration_seconds_count", **post) == 1
    assert added("http_request_duration_seconds_count", **get) == 1
    assert not any(job_id in dict(labels).get("route", "") for _, labels in after)
