"""The chaos suite's invariants judge what they should: the defects of issue 19 break them,
legitimate re-runs after a worker or broker fault do not (pure functions, no I/O)."""

from __future__ import annotations

import asyncio
import os
import random
import signal
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scripts.chaos.facts import Attempt, JobFacts, LimitedQueue, Run, RunningSample
from scripts.chaos.faults import KILLED, FaultRecord, QueuePause, Victim
from scripts.chaos.invariants import (
    BROKEN,
    HELD,
    NOT_APPLICABLE,
    Check,
    RoundInput,
    evaluate,
    touched,
)
from scripts.chaos.knobs import (
    AMQP_CLOSE,
    FAULT_KINDS,
    FLOW_CONTROL,
    KILL_SCHEDULERS,
    KILL_WORKER,
    POISON_INPUT,
    RABBITMQ_RESTART,
    RABBITMQ_STOP,
    ROLLING_DEPLOY,
    Knobs,
    LoadShape,
)
from scripts.chaos.load import MAY_FAIL, SUCCEED, AcceptedJob, plan_limited
from scripts.chaos.rounds import cancelled_by_sigterm, cron_due_by, due_minutes

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, 0, 10, tzinfo=UTC)
HEALTHY = "vm-100-aaaaaaaa"
KILLED_WORKER = "vm-200-bbbbbbbb"
OWN_PROJECT = "11111111-1111-1111-1111-111111111111"
TEAM_PROJECT = "22222222-2222-2222-2222-222222222222"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def attempt(number: int, status: str, worker: str | None = HEALTHY, **fields: Any) -> Attempt:
    values: dict[str, Any] = {
        "started_at": at(number),
        "finished_at": at(number + 0.5),
        "error_class": None,
        "error": None,
    }
    values.update(fields)
    return Attempt(number, status, worker, **values)


def job(job_id: str, status: str, attempts: list[Attempt], **fields: Any) -> JobFacts:
    values: dict[str, Any] = {
        "type": "simulate",
        "attempt": len(attempts),
        "max_attempts": 5,
        "result": {"durationSeconds": 0.01} if status == "succeeded" else None,
        "last_error": None,
        "last_error_class": None,
        "lost_count": 0,
        "worker_id": attempts[-1].worker_id if attempts else None,
        "schedule_id": None,
        "created_at": at(0),
        "finished_at": at(10),
        "cancel_requested": False,
    }
    values.update(fields)
    facts = JobFacts(id=job_id, status=status, **values)
    facts.attempts = attempts
    facts.runs = [Run(a.number, a.worker_id or "", at(a.number)) for a in attempts if a.ran]
    return facts


def round_input(kind: str, jobs: list[JobFacts], **fields: Any) -> RoundInput:
    fault = FaultRecord(kind, at(2), at(3))
    if kind in (KILL_WORKER, FLOW_CONTROL):
        fault.victims.append(Victim("worker-2", 200, KILLED))
    values: dict[str, Any] = {
        "fault": fault,
        "jobs": {j.id: j for j in jobs},
        "expected": {j.id: AcceptedJob(j.id, "instant", SUCCEED, "k") for j in jobs},
        "missing": [],
        "owner_jobs": {j.id for j in jobs},
        "given_up": 0,
        "refused": [],
        "queues": [{"name": "jobs.ready.high", "messages": 0, "consumers": 3}],
        "api_status": {j.id: j.status for j in jobs},
        "cron_minutes": [],
        "cron_fires": [],
        "drained": True,
    }
    values.update(fields)
    return RoundInput(**values)


def verdicts(data: RoundInput) -> dict[str, str]:
    return {check.name: check.status for check in evaluate(data)}


def test_a_clean_round_holds_every_invariant() -> None:
    clean = round_input(KILL_SCHEDULERS, [job("a" * 36, "succeeded", [attempt(1, "succeeded")])])
    assert set(verdicts(clean).values()) <= {HELD, NOT_APPLICABLE}


def test_a_healthy_job_dead_of_lease_lost_after_scheduler_crashes_breaks_dead() -> None:
    cancelled = attempt(1, "failed", error_class="Cancelled", error="lease lost")
    dead = job("d" * 36, "dead", [cancelled], dead_reason="permanent_error")
    result = verdicts(round_input(KILL_SCHEDULERS, [dead]))
    assert result["dead"] == BROKEN
    assert result["first-try"] == BROKEN
    assert result["re-runs"] == HELD  # it ran once: not a re-run


def test_a_lost_attempt_is_a_re_run_unless_its_worker_was_killed() -> None:
    lost_then_won = [attempt(1, "lost", KILLED_WORKER), attempt(2, "succeeded")]
    rerun = job("r" * 36, "succeeded", lost_then_won)
    assert verdicts(round_input(KILL_WORKER, [rerun]))["re-runs"] == HELD
    assert verdicts(round_input(KILL_SCHEDULERS, [rerun]))["re-runs"] == BROKEN


def test_a_job_dispatched_again_after_a_scheduler_crash_breaks_first_try() -> None:
    """Since the relay sends a maybe-published dispatch again as a copy (claimed before it
    runs), a scheduler crash no longer excuses a second attempt, run or not."""
    unrun = attempt(1, "lost", None, started_at=None, error_class="DispatchLost", error="lost")
    waited = job("w" * 36, "succeeded", [unrun, attempt(2, "succeeded")])
    assert verdicts(round_input(KILL_SCHEDULERS, [waited]))["first-try"] == BROKEN


@pytest.mark.parametrize("kind", [RABBITMQ_STOP, RABBITMQ_RESTART, AMQP_CLOSE])
def test_a_broker_outage_excuses_no_re_run(kind: str) -> None:
    twice = [attempt(1, "lost"), attempt(2, "succeeded")]
    during = job("o" * 36, "succeeded", twice)
    result = evaluate(round_input(kind, [during]))
    reruns = next(check for check in result if check.name == "re-runs")
    assert [o.subject for o in reruns.offenders] == [during.id]


def test_a_job_open_at_the_fault_that_ends_long_after_the_platform_is_whole_breaks_recovery() -> (
    None
):
    # The fault: at(2) to at(3), every service ready 1 s later: whole at at(4).
    prompt = job("p" * 36, "succeeded", [attempt(1, "succeeded")], finished_at=at(18))
    slow = job("s" * 36, "succeeded", [attempt(1, "succeeded")], finished_at=at(20))
    later = job("n" * 36, "succeeded", [attempt(1, "succeeded")], created_at=at(5))
    later.finished_at = at(60)  # accepted after the fault began: not judged
    data = round_input(KILL_SCHEDULERS, [prompt, slow, later])
    data.fault.recovered_s = 1.0
    recovery = next(check for check in evaluate(data) if check.name == "recovery")
    assert [o.subject for o in recovery.offenders] == [slow.id]  # 16 s > 15 s
    assert recovery.checked == 2
    assert any("16.0 s" in note for note in recovery.notes)
    data = round_input(KILL_WORKER, [prompt, slow, later])
    data.fault.recovered_s = 1.0
    assert verdicts(data)["recovery"] == HELD  # 30 s for the other faults
    data.fault.recovered_s = None  # never whole again: "terminal" and the rest judge
    assert verdicts(data)["recovery"] == NOT_APPLICABLE


def test_own_failures_are_not_re_runs_and_may_use_up_the_attempts() -> None:
    failures = [attempt(n, "failed", error_class="SimulatedFailure") for n in range(1, 6)]
    flaky = job("f" * 36, "dead", failures, dead_reason="max_attempts")
    data = round_input(KILL_SCHEDULERS, [flaky])
    data.expected[flaky.id] = AcceptedJob(flaky.id, "flaky", MAY_FAIL, "k")
    assert set(verdicts(data).values()) <= {HELD, NOT_APPLICABLE}


def test_an_email_sent_twice_is_excused_only_when_its_worker_was_killed() -> None:
    mail = job(
        "e" * 36,
        "succeeded",
        [attempt(1, "lost", KILLED_WORKER), attempt(2, "succeeded")],
        type="email",
        result={"messageId": f"<job-{'e' * 36}@localhost>"},
    )
    mail.emails = 2
    assert verdicts(round_input(KILL_WORKER, [mail]))["email-once"] == HELD
    assert verdicts(round_input(RABBITMQ_STOP, [mail]))["email-once"] == BROKEN


def test_a_job_accepted_but_never_recorded_and_a_duplicate_break_accepted() -> None:
    kept = job("k" * 36, "succeeded", [attempt(1, "succeeded")])
    data = round_input(KILL_SCHEDULERS, [kept], missing=["m" * 36])
    data.expected["m" * 36] = AcceptedJob("m" * 36, "instant", SUCCEED, "k2")
    assert verdicts(data)["accepted"] == BROKEN
    duplicate = replace(data, missing=[], owner_jobs={kept.id, "x" * 36})
    duplicate.expected.pop("m" * 36)
    assert verdicts(duplicate)["accepted"] == BROKEN


def test_a_due_minute_without_a_fire_breaks_cron() -> None:
    minutes = due_minutes(at(-70), at(60))
    assert [m.minute for m in minutes] == [0, 1]
    data = round_input(KILL_SCHEDULERS, [], cron_minutes=minutes, cron_fires=[])
    assert verdicts(data)["cron"] == BROKEN


def test_every_fault_kind_comes_once_in_as_many_rounds_and_seeds_replay() -> None:
    knobs = Knobs(rounds=len(FAULT_KINDS), seed=7)
    assert sorted(knobs.round_faults()) == sorted(FAULT_KINDS)
    assert knobs.round_seeds()[0] == 7
    assert Knobs(rounds=3, seed=7).round_seeds() == knobs.round_seeds()[:3]


def test_a_scheduler_kill_excuses_no_re_run() -> None:
    """A killed relay never publishes a dispatch twice (adapters/outbox_relay.py claims rows
    before it publishes them): an attempt run twice right at a scheduler kill is broken."""
    fault = FaultRecord(KILL_SCHEDULERS, started=at(1.2), ended=at(1.2))
    at_the_kill = job("at-kill", "succeeded", [attempt(1, "succeeded")])
    at_the_kill.runs = [Run(1, HEALTHY, at(1.201)), Run(1, KILLED_WORKER, at(3.2))]
    assert not touched(at_the_kill, fault)
    assert verdicts(round_input(KILL_SCHEDULERS, [at_the_kill]))["re-runs"] == BROKEN


def test_a_minute_an_outage_held_back_is_judged_only_after_the_platform_is_back() -> None:
    """The scheduler cannot fire a minute the database was down across until it is back: the
    minute is judged a later round, not on the heels of the outage."""
    now = datetime.now(UTC)
    quiet = FaultRecord("kill-worker", started=now - timedelta(seconds=40))
    quiet.ended, quiet.recovered_s = now - timedelta(seconds=39), 0.5
    assert abs((cron_due_by(quiet, 15.0) - (now - timedelta(seconds=15))).total_seconds()) < 1
    outage = FaultRecord("postgres-stop", started=now - timedelta(seconds=23))
    outage.ended, outage.recovered_s = now - timedelta(seconds=2), 1.5
    assert cron_due_by(outage, 15.0) == outage.started  # minutes from the outage on wait
    unended = cron_due_by(FaultRecord("none", started=now), 15.0)
    assert abs((unended - (now - timedelta(seconds=15))).total_seconds()) < 1


def test_poison_input_answered_other_than_400_or_422_breaks_accepted() -> None:
    data = round_input(POISON_INPUT, [job("a" * 36, "succeeded", [attempt(1, "succeeded")])])
    assert verdicts(data)["accepted"] == HELD
    data.fault.misanswered.append("POST /api/jobs b'...': 202")
    assert verdicts(data)["accepted"] == BROKEN


def test_a_rolling_deploy_excuses_no_re_run() -> None:
    twice = job("t" * 36, "succeeded", [attempt(1, "lost"), attempt(2, "succeeded")])
    assert verdicts(round_input(ROLLING_DEPLOY, [twice]))["re-runs"] == BROKEN


async def test_sigterm_cancels_a_run_so_its_platform_is_stopped() -> None:
    stopped: list[str] = []

    async def a_run() -> None:
        with cancelled_by_sigterm():
            try:
                os.kill(os.getpid(), signal.SIGTERM)
                await asyncio.sleep(10)
            finally:
                stopped.append("platform")

    with pytest.raises(asyncio.CancelledError):
        await asyncio.create_task(a_run())
    assert stopped == ["platform"]
    # The handler is gone with the run: SIGTERM means the default again.
    assert signal.getsignal(signal.SIGTERM) == signal.SIG_DFL


def limited(*running: int, cap: int = 2) -> LimitedQueue:
    """A queue limited to ``cap``, sampled every 50 ms with ``running`` jobs each time."""
    samples = [
        RunningSample(at(n * 0.05), tuple(f"{n:02d}{index:034d}" for index in range(count)))
        for n, count in enumerate(running)
    ]
    return LimitedQueue(TEAM_PROJECT, "default", cap, samples)


def limit_check(queue: LimitedQueue | None) -> Check:
    data = round_input(FLOW_CONTROL, [], limited=queue)
    return next(check for check in evaluate(data) if check.name == "limit")


def test_a_limited_queue_sampled_with_more_running_than_its_limit_breaks_limit() -> None:
    check = limit_check(limited(0, 1, 2, 3, 2, 1))
    assert check.status == BROKEN
    assert check.checked == 6
    # Each job running at the sample over the limit is named once, with when and how many.
    assert [o.subject for o in check.offenders] == [f"03{i:034d}" for i in range(3)]
    assert all("one of 3 jobs running" in o.why for o in check.offenders)
    assert any("at most 3 running (maxConcurrency 2)" in note for note in check.notes)


def test_a_limited_queue_at_its_limit_holds_limit() -> None:
    check = limit_check(limited(0, 2, 2, 1, 2, 0))
    assert check.status == HELD
    assert check.offenders == []
    assert any("3 samples at the limit, 0 over it" in note for note in check.notes)


def test_a_round_without_a_limited_queue_or_its_samples_does_not_judge_limit() -> None:
    assert limit_check(None).status == NOT_APPLICABLE
    unanswered = LimitedQueue(TEAM_PROJECT, "default", 2, unanswered=40)
    assert limit_check(unanswered).status == NOT_APPLICABLE
    assert verdicts(round_input(KILL_WORKER, []))["limit"] == NOT_APPLICABLE


def test_a_job_submitted_to_a_paused_queue_that_starts_before_the_resume_breaks_pause() -> None:
    def held_job(job_id: str, created: float, started: float, **fields: Any) -> JobFacts:
        ran = attempt(1, "succeeded", started_at=at(started), finished_at=at(started + 0.5))
        facts = job(job_id, "succeeded", [ran], created_at=at(created), **fields)
        facts.runs = [Run(1, HEALTHY, at(started))]
        return facts

    # The load's default queue paused from at(2) to at(7).
    early = held_job("e" * 36, 2.5, 4.0, project_id=OWN_PROJECT)  # started while paused
    held = held_job("h" * 36, 3.0, 7.2, project_id=OWN_PROJECT)
    before = held_job("b" * 36, 1.0, 2.5, project_id=OWN_PROJECT)  # sent before the pause
    other = held_job("o" * 36, 3.0, 3.5, project_id=TEAM_PROJECT)  # another project's queue
    data = round_input(FLOW_CONTROL, [early, held, before, other])
    data.fault.pause = QueuePause(OWN_PROJECT, "default", at(2), at(7))
    pause = next(check for check in evaluate(data) if check.name == "pause")
    assert [o.subject for o in pause.offenders] == [early.id]
    assert pause.checked == 2
    data.jobs.pop(early.id)
    assert verdicts(data)["pause"] == HELD
    data.fault.pause = None
    assert verdicts(data)["pause"] == NOT_APPLICABLE


def test_a_flow_control_round_excuses_the_re_runs_of_its_killed_worker_only() -> None:
    lost_then_won = [attempt(1, "lost", KILLED_WORKER), attempt(2, "succeeded")]
    rerun = job("r" * 36, "succeeded", lost_then_won, project_id=TEAM_PROJECT)
    assert verdicts(round_input(FLOW_CONTROL, [rerun]))["re-runs"] == HELD
    twice = job("t" * 36, "succeeded", [attempt(1, "lost"), attempt(2, "succeeded")])
    assert verdicts(round_input(FLOW_CONTROL, [twice]))["re-runs"] == BROKEN


def test_the_second_projects_load_is_sized_to_its_limit() -> None:
    """Slow jobs and batches larger than the limit, about ``limited_load`` seconds of work
    per slot and second of load (a backlog, drained soon after)."""
    shape = LoadShape(seconds=4.0, slow_seconds=(0.3, 1.5), limited_load=2.0)
    requests = plan_limited(random.Random(5), shape, 1, limit=2)
    jobs = sum(len(request.expect) for request in requests)
    assert 2 * 4.0 * 2.0 <= jobs * 0.9 < 2 * 4.0 * 2.0 + 6 * 0.9
    assert {request.kind for request in requests} <= {"limited", "limited-batch"}
    assert all(len(r.expect) > 2 for r in requests if r.kind == "limited-batch")
    assert all(0 <= r.at <= shape.seconds for r in requests)
    assert [r.at for r in requests] == sorted(r.at for r in requests)
