"""What a chaos run does, from the environment (``make chaos ROUNDS=50 SEED=...``).

Every round has a seed of its own: round 1 uses SEED itself and each later one a seed drawn
from SEED, so ``ROUNDS=1 SEED=<round seed> FAULTS=<its fault>`` replays a round (its load plan
and the moment and victim of its fault; the machine's timing is never the same twice).
"""

from __future__ import annotations

import os
import random
import secrets
from dataclasses import dataclass, field, replace

KILL_SCHEDULER = "kill-scheduler"
KILL_SCHEDULERS = "kill-schedulers"
KILL_WORKER = "kill-worker"
KILL_SUBMISSION = "kill-submission"
KILL_GATEWAY = "kill-gateway"
KILL_DASHBOARD = "kill-dashboard"
RABBITMQ_STOP = "rabbitmq-stop"
RABBITMQ_RESTART = "rabbitmq-restart"
ROLLING_DEPLOY = "rolling-deploy"
POISON_INPUT = "poison-input"
POSTGRES_STOP = "postgres-stop"
MONGO_STOP = "mongo-stop"
AMQP_CLOSE = "amqp-close"
SCHEDULER_PAUSE = "scheduler-pause"
SCHEDULERS_PAUSE = "schedulers-pause"
WORKER_PAUSE = "worker-pause"
FLOW_CONTROL = "flow-control"

FAULT_KINDS: tuple[str, ...] = (
    KILL_SCHEDULER,
    KILL_SCHEDULERS,
    KILL_WORKER,
    KILL_SUBMISSION,
    KILL_GATEWAY,
    KILL_DASHBOARD,
    RABBITMQ_STOP,
    RABBITMQ_RESTART,
    POSTGRES_STOP,
    MONGO_STOP,
    AMQP_CLOSE,
    SCHEDULER_PAUSE,
    SCHEDULERS_PAUSE,
    WORKER_PAUSE,
    ROLLING_DEPLOY,
    POISON_INPUT,
    FLOW_CONTROL,
)


@dataclass(frozen=True)
class LoadShape:
    """One round's load: requests spread over ``seconds`` at ``rate`` per second."""

    seconds: float = 20.0
    rate: float = 5.0  # requests per second (a batch is one request)
    batch_size: tuple[int, int] = (5, 20)
    slow_seconds: tuple[float, float] = (0.5, 3.0)
    max_in_flight: int = 48
    # flow-control: the second project's work (seconds of its slow jobs) per slot of its
    # queue's limit and second of load: above 1, a backlog builds and the limit is reached;
    # not much above, as a job behind it must still end within ``recovery``'s bound.
    limited_load: float = 1.2


@dataclass(frozen=True)
class Knobs:
    rounds: int = 10
    seed: int = 0
    faults: tuple[str, ...] = FAULT_KINDS
    load: LoadShape = field(default_factory=LoadShape)
    workers: int = 3
    schedulers: int = 2
    outage_seconds: float = 10.0  # RabbitMQ, PostgreSQL, MongoDB stopped this long
    restart_seconds: float = 20.0  # rabbitmq-restart: stop_app, start_app this much later
    scheduler_pause_seconds: float = 30.0
    queue_pause_seconds: float = 5.0  # flow-control: the load's queue paused this long
    max_concurrency: int = 2  # flow-control: the second project's queue's limit
    lease_seconds: int = 10  # SCHEDULER_LEASE_SECONDS; a paused worker stays paused longer
    recover_timeout: float = 120.0  # every service ready again after the fault
    drain_timeout: float = 240.0  # every job of the round terminal
    give_up_after: float = 120.0  # a submission retried this long without a 2xx is given up
    cron_slack: float = 15.0  # a minute is due this long after it began
    # The services' PYTHONPATH (empty: this checkout): another checkout's src directories,
    # e.g. a git worktree of an older commit, to see whether a defect was already there.
    services_pythonpath: str = ""

    @property
    def worker_pause_seconds(self) -> float:
        """Longer than a lease plus the reaper's pass and a heartbeat's way."""
        return self.lease_seconds * 1.5 + 3.0

    def round_seeds(self) -> list[int]:
        draw = random.Random(self.seed)
        return [self.seed] + [draw.randrange(1, 2**31) for _ in range(self.rounds - 1)]

    def round_faults(self) -> list[str]:
        """The kinds in turn (shuffled by the seed), so ROUNDS >= len(FAULTS) covers each."""
        order = list(self.faults)
        if len(order) > 1:
            random.Random(self.seed ^ 0x5EED).shuffle(order)
        return [order[index % len(order)] for index in range(self.rounds)]


QUICK = Knobs(
    rounds=len(FAULT_KINDS),
    load=LoadShape(
        seconds=4.0, rate=3.0, batch_size=(4, 8), slow_seconds=(0.3, 1.5), limited_load=2.0
    ),
    outage_seconds=6.0,
    queue_pause_seconds=4.0,
    scheduler_pause_seconds=15.0,
    drain_timeout=150.0,
    recover_timeout=90.0,
)


def _number(name: str, default: float) -> float:
    value = os.environ.get(name, "").strip()
    return float(value) if value else default


def from_env(base: Knobs | None = None) -> Knobs:
    """ROUNDS, SEED (random when empty), FAULTS (comma-separated kinds), LOAD_SECONDS, RATE,
    OUTAGE_SECONDS, SCHEDULER_PAUSE_SECONDS, DRAIN_TIMEOUT, SERVICES_PYTHONPATH over
    ``base``."""
    knobs = base or Knobs()
    seed_text = os.environ.get("SEED", "").strip()
    faults_text = os.environ.get("FAULTS", "").strip()
    faults = tuple(f.strip() for f in faults_text.split(",") if f.strip()) or knobs.faults
    unknown = [f for f in faults if f not in FAULT_KINDS]
    if unknown:
        raise SystemExit(f"unknown fault kinds {unknown}; known: {', '.join(FAULT_KINDS)}")
    load = replace(
        knobs.load,
        seconds=_number("LOAD_SECONDS", knobs.load.seconds),
        rate=_number("RATE", knobs.load.rate),
    )
    return replace(
        knobs,
        rounds=int(_number("ROUNDS", knobs.rounds)),
        seed=int(seed_text) if seed_text else secrets.randbelow(2**31 - 1) + 1,
        faults=faults,
        load=load,
        outage_seconds=_number("OUTAGE_SECONDS", knobs.outage_seconds),
        scheduler_pause_seconds=_number("SCHEDULER_PAUSE_SECONDS", knobs.scheduler_pause_seconds),
        drain_timeout=_number("DRAIN_TIMEOUT", knobs.drain_timeout),
        services_pythonpath=os.environ.get("SERVICES_PYTHONPATH", knobs.services_pythonpath),
    )
