"""The invariants checked after every round: pure functions over the round's facts.

A job is *touched* by the round's fault when a re-run of it is legitimate: the fault killed or
paused a worker that ran (or announced) one of its attempts. Nothing else touches a job: a
scheduler, gateway, submission or dashboard crash, a paused scheduler, a PostgreSQL or MongoDB
outage, and (since issue 31) a broker stopped or restarted or every connection closed may
delay a job, never re-run it, fail it or lose it. And every job accepted before the fault
ends within a bound of the platform being whole again (``recovery``).

A ``flow-control`` round adds two: its limited queue never had more jobs running than its
``maxConcurrency`` in any sample (``limit``), and no job submitted to its paused queue while
paused started before the resume (``pause``). Its fault spans the pause and the kill that
follows, so a job the pause held is judged by ``recovery`` from the platform being whole
after both, as a job an outage held.
"""

from __future__ import annotations

import contextlib
from dataclasses import dataclass, field
from datetime import datetime, timedelta

from .facts import TERMINAL, CronFire, JobFacts, LimitedQueue
from .faults import SCHEDULER_KILLS, WORKER_FAULTS, FaultRecord
from .load import DEAD, SUCCEED, AcceptedJob

HELD = "held"
BROKEN = "broken"
NOT_APPLICABLE = "n/a"

# (column, what it checks) in table order.
INVARIANTS: tuple[tuple[str, str], ...] = (
    ("terminal", "every accepted job reaches a terminal state (store and public API agree)"),
    ("queues", "the ready queues drain to empty"),
    ("first-try", "a job no fault touched ends on its first attempt, run once"),
    ("re-runs", "a job re-runs only when its worker was killed or paused"),
    ("dead", "no job dead (or cancelled) unless by its own failures or its worker's faults"),
    ("one-success", "a succeeded job has one succeeded attempt, and its result is recorded"),
    ("email-once", "each email reaches the SMTP sink once (its worker killed: excused, shown)"),
    ("cron", "the cron schedule fires once per due minute across replicas"),
    ("dag", "DAG children run only after their parents succeeded"),
    ("accepted", "every 2xx answer maps to one job; input no store can hold is refused (4xx)"),
    ("recovery", "jobs accepted before the fault end soon after the platform is whole again"),
    ("limit", "a limited queue never has more jobs running than its maxConcurrency (sampled)"),
    ("pause", "no job submitted to a paused queue starts before its resume"),
)
# How long after the platform is whole again (the fault undone, every service ready) a job
# accepted before the fault may still take to end: a worker's lease (10 s) and the longest
# job of the load (3 s slow, 4 s delay, retries) after a scheduler crash; more for the rest,
# which also drain what piled up meanwhile (after a broker outage every running lease runs a
# lease from the scheduler's reconnect, and a kept result waits up to 5 s to go again).
RECOVERY_BOUND = {
    "scheduler": timedelta(seconds=15),
    "other": timedelta(seconds=30),
}


@dataclass(frozen=True)
class Offender:
    subject: str  # a job id (or a queue, a minute)
    why: str


@dataclass
class Check:
    name: str
    status: str = HELD
    checked: int = 0
    offenders: list[Offender] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def fail(self, subject: str, why: str) -> None:
        self.status = BROKEN
        self.offenders.append(Offender(subject, why))

    def cell(self) -> str:
        if self.status == BROKEN:
            return f"BROKEN {len(self.offenders)}"
        return self.status


@dataclass
class RoundInput:
    fault: FaultRecord
    jobs: dict[str, JobFacts]
    expected: dict[str, AcceptedJob]  # accepted jobs and the round's cron jobs
    missing: list[str]
    owner_jobs: set[str]
    given_up: int
    refused: list[tuple[str, int, dict[str, object]]]
    queues: list[dict[str, object]]
    api_status: dict[str, str]
    cron_minutes: list[datetime]  # minutes due in this round's cron window
    cron_fires: list[CronFire]
    drained: bool
    limited: LimitedQueue | None = None  # flow-control: the limited queue, sampled


def touched(job: JobFacts, fault: FaultRecord) -> bool:
    return fault.kind in WORKER_FAULTS and bool(job.pids() & fault.worker_pids)


def expected_runs(job: JobFacts) -> int:
    """Runs its own outcome explains: each of its own failures plus the one success, and at
    least one (a job stopped on its only run did not re-run: "dead" judges it)."""
    return max(1, job.own_failures + (1 if job.status == "succeeded" else 0))


def check_terminal(data: RoundInput) -> Check:
    check = Check("terminal", checked=len(data.jobs))
    for job in data.jobs.values():
        if job.status not in TERMINAL:
            check.fail(job.id, f"still {job.status} at attempt {job.attempt}")
        elif data.api_status.get(job.id) != job.status:
            shown = data.api_status.get(job.id) or "not found"
            check.fail(job.id, f"the API shows {shown}, the store {job.status}")
    if not data.drained:
        check.notes.append("gave up waiting for the round's jobs to finish")
    return check


def check_queues(data: RoundInput) -> Check:
    check = Check("queues")
    if not data.queues:
        check.fail("management API", "no queue list (the broker's management API did not answer)")
    for queue in data.queues:
        name = str(queue.get("name", ""))
        depth = int(str(queue.get("messages") or 0))
        if name.startswith("jobs.ready"):
            check.checked += 1
            if "messages" not in queue:
                check.fail(name, "its depth is unknown (no statistics from the broker)")
            elif depth:
                check.fail(name, f"{depth} messages left")
        elif name.startswith("jobs.") and depth and not int(str(queue.get("consumers") or 0)):
            check.notes.append(f"{name}: {depth} messages and no consumer")
    return check


def check_first_try(data: RoundInput) -> Check:
    check = Check("first-try")
    for job in data.jobs.values():
        wanted = data.expected[job.id].expect
        if wanted not in (SUCCEED, DEAD) or touched(job, data.fault):
            continue
        if job.status not in TERMINAL:
            continue  # "terminal" reports it
        check.checked += 1
        target = "succeeded" if wanted == SUCCEED else "dead"
        if job.status != target or job.attempt != 1 or job.run_count != 1:
            check.fail(
                job.id,
                f"{job.status} at attempt {job.attempt} after {job.run_count} runs "
                f"(expected {target} at attempt 1, one run)",
            )
    return check


def whole_again(fault: FaultRecord) -> datetime | None:
    """When the platform was whole again: the fault undone and every service ready."""
    if fault.ended is None or fault.recovered_s is None or fault.not_ready:
        return None
    return fault.ended + timedelta(seconds=fault.recovered_s)


def check_recovery(data: RoundInput) -> Check:
    check = Check("recovery")
    whole = whole_again(data.fault)
    if whole is None:
        check.status = NOT_APPLICABLE
        return check
    kind = data.fault.kind
    bound = RECOVERY_BOUND["scheduler" if kind in SCHEDULER_KILLS else "other"]
    latest: tuple[timedelta, str] | None = None
    for job in data.jobs.values():
        if job.created_at > data.fault.started or job.status not in TERMINAL:
            continue  # accepted after the fault began; "terminal" reports the rest
        if job.finished_at is None or job.finished_at <= data.fault.started:
            continue
        check.checked += 1
        late = job.finished_at - whole
        if latest is None or late > latest[0]:
            latest = (late, job.id)
        if late > bound:
            check.fail(
                job.id,
                f"ended {late.total_seconds():.1f} s after the platform was whole again "
                f"(bound {bound.total_seconds():.0f} s)",
            )
    if latest is not None:
        check.notes.append(
            f"the last job open at the fault ended {latest[0].total_seconds():.1f} s "
            f"after the platform was whole again ({latest[1]})"
        )
    return check


def check_reruns(data: RoundInput) -> Check:
    check = Check("re-runs")
    excused: list[str] = []
    for job in data.jobs.values():
        if job.status not in TERMINAL:
            continue
        check.checked += 1
        extra = job.run_count - expected_runs(job)
        if extra <= 0:
            continue
        if touched(job, data.fault):
            excused.append(f"{job.id} x{job.run_count}")
            continue
        check.fail(
            job.id,
            f"ran {job.run_count} times, {job.own_failures} own failures, {job.status}; "
            f"attempts {', '.join(f'{a.number}:{a.status}' for a in job.attempts)}",
        )
    if excused:
        check.notes.append(
            f"{len(excused)} jobs touched by the fault re-ran (allowed): {', '.join(excused[:8])}"
            + (" ..." if len(excused) > 8 else "")
        )
    late = [job.id for job in data.jobs.values() if runs_after_finish(job)]
    if late:
        check.notes.append(
            f"{len(late)} jobs had a handler start after the job had finished (a stale "
            f"delivery run again): {', '.join(late[:8])}"
        )
    return check


def runs_after_finish(job: JobFacts) -> int:
    """Handler runs that began after the job's terminal state was recorded."""
    if job.finished_at is None:
        return 0
    return sum(1 for run in job.runs if run.at > job.finished_at)


def check_dead(data: RoundInput) -> Check:
    check = Check("dead")
    victims = data.fault.worker_pids
    for job in data.jobs.values():
        if job.status == "cancelled":
            check.checked += 1
            check.fail(job.id, "cancelled, though nobody asked to cancel it")
            continue
        if job.status != "dead":
            continue
        check.checked += 1
        explained = [a.own_failure or (a.worker_pid in victims) for a in job.attempts]
        last = job.attempts[-1] if job.attempts else None
        permanent = last is not None and last.own_failure and job.dead_reason == "permanent_error"
        used_up = bool(explained) and all(explained) and job.attempt >= job.max_attempts
        if not (permanent or used_up):
            history = ", ".join(f"{a.number}:{a.status}/{a.error_class}" for a in job.attempts)
            check.fail(
                job.id,
                f"dead ({job.dead_reason}, {job.last_error_class}: {job.last_error}) after "
                f"attempts {history}",
            )
    return check


def check_one_success(data: RoundInput) -> Check:
    check = Check("one-success")
    for job in data.jobs.values():
        if job.status != "succeeded":
            continue
        check.checked += 1
        wins = [a for a in job.attempts if a.status == "succeeded"]
        if len(wins) != 1:
            check.fail(job.id, f"{len(wins)} succeeded attempts")
            continue
        win = wins[0]
        if job.result is None:
            check.fail(job.id, "no result recorded")
        elif win.number != job.attempt or (job.worker_id and win.worker_id != job.worker_id):
            check.fail(
                job.id,
                f"job says attempt {job.attempt} on {job.worker_id}, "
                f"the succeeded attempt is {win.number} on {win.worker_id}",
            )
        elif job.type == "simulate" and (lines := job.success_lines.get(win.number)):
            recorded = float(job.result.get("durationSeconds", -1))
            if not any(abs(recorded - logged) <= 0.0006 for logged in _durations(lines)):
                check.fail(job.id, f"result {job.result} is not the succeeded run's: {lines}")
        elif job.type == "email" and job.result.get("messageId") != f"<job-{job.id}@localhost>":
            check.fail(job.id, f"result {job.result} names another message")
    return check


def _durations(lines: list[str]) -> list[float]:
    """The seconds of simulate's "worked 0.937 s, succeeded" lines."""
    found = []
    for line in lines:
        with contextlib.suppress(ValueError, IndexError):
            found.append(float(line.split()[1]))
    return found


def check_email_once(data: RoundInput) -> Check:
    check = Check("email-once")
    excused: list[str] = []
    for job in data.jobs.values():
        if job.type != "email" or job.status not in TERMINAL:
            continue
        check.checked += 1
        if job.status == "succeeded" and job.emails == 0:
            check.fail(job.id, "succeeded, but the sink never received it")
        elif job.emails > 1:
            if data.fault.kind in WORKER_FAULTS and touched(job, data.fault):
                excused.append(f"{job.id} x{job.emails}")
            else:
                check.fail(job.id, f"the sink received it {job.emails} times")
    if not check.checked:
        check.status = NOT_APPLICABLE
    if excused:
        check.notes.append(
            f"{len(excused)} emails sent again after their worker was killed/paused between "
            f"the send and the report: {', '.join(excused)}"
        )
    return check


def check_cron(data: RoundInput) -> Check:
    check = Check("cron", checked=len(data.cron_minutes))
    fired = {fire.fire_time for fire in data.cron_fires}
    for minute in data.cron_minutes:
        if minute not in fired:
            check.fail(f"{minute:%H:%M}", "this minute was due and did not fire")
    if not data.cron_minutes:
        check.status = NOT_APPLICABLE
    return check


def check_dag(data: RoundInput) -> Check:
    check = Check("dag")
    for job in data.jobs.values():
        if not job.parents:
            continue
        check.checked += 1
        parents = [data.jobs.get(parent) for parent in job.parents]
        if any(parent is None for parent in parents):
            check.fail(job.id, "a parent is not among the round's jobs")
            continue
        known = [parent for parent in parents if parent is not None]
        started = [a.started_at for a in job.attempts if a.started_at is not None]
        first = min(started) if started else None
        if all(parent.status == "succeeded" for parent in known):
            finished = [parent.finished_at for parent in known]
            if first is not None and any(f is None or first < f for f in finished):
                check.fail(job.id, f"started {first:%H:%M:%S.%f} before a parent finished")
        elif first is not None:
            check.fail(job.id, "ran although a parent did not succeed")
    if not check.checked:
        check.status = NOT_APPLICABLE
    return check


def check_accepted(data: RoundInput) -> Check:
    check = Check("accepted", checked=len(data.expected))
    for job_id in data.missing:
        check.fail(job_id, "answered 2xx, but the job store had no such job when checked")
    unexplained = data.owner_jobs - set(data.expected)
    if len(unexplained) > data.given_up:
        for job_id in sorted(unexplained):
            check.fail(job_id, "a job nobody got a 2xx for (a duplicate submission?)")
    for kind, status, body in data.refused:
        check.fail(f"{kind} request", f"refused with {status}: {body}")
    for request in data.fault.misanswered:  # poison-input: input no store can hold
        check.fail("poison request", f"not refused with 400/422: {request}")
    if data.given_up:
        check.notes.append(
            f"{data.given_up} submissions never answered (given up; "
            f"{len(unexplained)} unanswered jobs exist)"
        )
    return check


def check_limit(data: RoundInput) -> Check:
    check = Check("limit")
    limited = data.limited
    if limited is None or not limited.samples:
        check.status = NOT_APPLICABLE
        if limited is not None:
            check.notes.append("no sample of the limited queue (the job store did not answer)")
        return check
    cap = limited.max_concurrency
    check.checked = len(limited.samples)
    over = [sample for sample in limited.samples if sample.running > cap]
    blamed: set[str] = set()
    for sample in over:
        for job_id in sample.job_ids:
            if job_id not in blamed:  # each job once, at the first sample that shows it
                blamed.add(job_id)
                check.fail(
                    job_id,
                    f"one of {sample.running} jobs running at {sample.at:%H:%M:%S.%f} in "
                    f"queue {limited.queue} of project {limited.project_id} "
                    f"(maxConcurrency {cap})",
                )
    peak = max(sample.running for sample in limited.samples)
    full = sum(1 for sample in limited.samples if sample.running == cap)
    first, last = limited.samples[0].at, limited.samples[-1].at
    check.notes.append(
        f"{len(limited.samples)} samples over {(last - first).total_seconds():.1f} s: at most "
        f"{peak} running (maxConcurrency {cap}), {full} samples at the limit, "
        f"{len(over)} over it"
        + (f"; {limited.unanswered} samples unanswered" if limited.unanswered else "")
    )
    return check


def check_pause(data: RoundInput) -> Check:
    check = Check("pause")
    pause = data.fault.pause
    if pause is None:
        check.status = NOT_APPLICABLE
        return check
    starts: list[datetime] = []
    for job in data.jobs.values():
        if job.project_id != pause.project_id or job.queue != pause.queue:
            continue
        if not pause.began <= job.created_at < pause.ended:
            continue
        check.checked += 1
        start = job.first_start()
        if start is None:
            continue  # never ran: "terminal" and "dead" judge it
        starts.append(start)
        if start < pause.ended:
            check.fail(
                job.id,
                f"submitted at {job.created_at:%H:%M:%S.%f} to paused queue {pause.queue}, "
                f"started at {start:%H:%M:%S.%f}, before the resume at {pause.ended:%H:%M:%S.%f}",
            )
    if starts:
        check.notes.append(
            f"{check.checked} jobs submitted while the queue was paused; the first of them "
            f"started {(min(starts) - pause.ended).total_seconds():.2f} s after the resume"
        )
    return check


CHECKS = (
    check_terminal,
    check_queues,
    check_first_try,
    check_reruns,
    check_dead,
    check_one_success,
    check_email_once,
    check_cron,
    check_dag,
    check_accepted,
    check_recovery,
    check_limit,
    check_pause,
)


def evaluate(data: RoundInput) -> list[Check]:
    """Every check; an offending job's reason starts with its kind of request."""
    checks = [check(data) for check in CHECKS]
    for check in checks:
        check.offenders = [
            Offender(o.subject, f"[{data.expected[o.subject].kind}] {o.why}")
            if o.subject in data.expected
            else o
            for o in check.offenders
        ]
    return checks
