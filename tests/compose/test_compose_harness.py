"""The harness's own rules, without containers: the start order it derives from the compose
file, and that its start-order check notices a service started too early."""

from __future__ import annotations

from pathlib import Path

import pytest

from .stack import ComposeStack, StartLog, podman_time, seconds

pytestmark = pytest.mark.unit


def test_the_start_order_follows_the_compose_files_depends_on(tmp_path: Path) -> None:
    stack = ComposeStack(tmp_path, {})
    stack.resolve()
    order = stack.start_order()
    position = {name: index for index, name in enumerate(order)}
    for service in order:
        for dependency in stack.depends_on(service):
            assert position[dependency] < position[service], (dependency, service)
    assert order[-1] == "gateway"
    assert stack.one_shot("migrate-scheduler") and not stack.one_shot("scheduler")
    assert "grafana" not in order  # left out here, with its reason


def test_a_service_started_before_its_dependency_was_healthy_is_reported() -> None:
    log = StartLog(
        started={"postgres": 10.0, "migrate": 12.0, "scheduler": 14.0},
        healthy={"postgres": 13.0},
        completed={"migrate": 13.5},
        edges=[
            ("migrate", "postgres", "service_healthy"),
            ("scheduler", "migrate", "service_completed_successfully"),
        ],
    )
    assert log.early_starts() == ["migrate started before postgres was service_healthy"]
    log.started["migrate"] = 13.2
    assert log.early_starts() == []


def test_podman_times_and_compose_durations() -> None:
    assert podman_time("2026-12-04T16:57:10.5Z") == podman_time("2026-12-04T17:57:10.5+01:00")
    assert podman_time("2026-12-04T16:57:10.41861049Z") % 1 == pytest.approx(0.41861049)
    assert [seconds(value, 0) for value in ("10s", "1m30s", "500ms", None)] == [10, 90, 0.5, 0]
