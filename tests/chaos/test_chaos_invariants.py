"""The chaos suite's invariants judge what they should: the defects of issue 19 break them,
legitimate re-runs after a worker or broker fault do not (pure functions, no I/O)."""

from __future__ import annotations

import asyncio
import os
import signal
from dataclasses import replace
from datetime import UTC, datetime, timedelta
from typing import Any

import pytest

from scripts.chaos.facts import Attempt, JobFacts, Run
from scripts.chaos.faults import KILLED, FaultRecord, Victim
from scripts.chaos.invariants import (
    BROKEN,
    HELD,
    NOT_APPLICABLE,
    RoundInput,
    evaluate,
    touched,
)
from scripts.chaos.knobs import (
    AMQP_CLOSE,
    FAULT_KINDS,
    KILL_SCHEDULERS,
    KILL_WORKER,
    POISON_INPUT,
    RABBITMQ_RESTART,
    RABBITMQ_STOP,
    ROLLING_DEPLOY,
    Knobs,
)
from scripts.chaos.load import MAY_FAIL, SUCCEED, AcceptedJob
from scripts.chaos.rounds import cancelled_by_sigterm, cron_due_by, due_minutes

pytestmark = pytest.mark.unit

T0 = datetime(2026, 1, 1, 12, 0, 10, tzinfo=UTC)
HEALTHY = "vm-100-aaaaaaaa"
KILLED_WORKER = "vm-200-bbbbbbbb"


def at(seconds: float) -> datetime:
    return T0 + timedelta(seconds=seconds)


def attempt(number: int, status: str, worker: str = HEALTHY, **fields: Any) -> Attempt:
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
    if kind == KILL_WORKER:
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
