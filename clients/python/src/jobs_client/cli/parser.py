"""The ``jobs`` command line: argparse, one subcommand per operation.

``--json``, ``--url``, ``--api-key`` and ``--project`` are accepted before or after the
subcommand (``jobs --json list`` and ``jobs list --json``): the top-level parser has them
with their defaults, the subcommands' own copies have a suppressed default, so a value given
at either place survives (the copies must be distinct objects: ``set_defaults`` on a shared
one would reach both).
"""

from __future__ import annotations

import argparse

from jobs_client.models import JOB_STATUSES
from jobs_client.queue_calls import QueueSettings
from jobs_client.queue_models import ConcurrencyKey, RateLimit


def _common(*, top: bool) -> argparse.ArgumentParser:
    common = argparse.ArgumentParser(add_help=False)
    common.add_argument(
        "--json",
        action="store_true",
        default=False if top else argparse.SUPPRESS,
        help="print JSON for scripts (streams: one object per line)",
    )
    common.add_argument(
        "--url",
        default=None if top else argparse.SUPPRESS,
        help="the gateway (default: JOBS_URL, else the session's, else http://127.0.0.1:3000)",
    )
    common.add_argument(
        "--api-key",
        default=None if top else argparse.SUPPRESS,
        help="act as a project's API key (default: JOBS_API_KEY when no JOBS_TOKEN is set); "
        "better from the environment than on a command line others may see",
    )
    common.add_argument(
        "--project",
        default=None if top else argparse.SUPPRESS,
        help="the project to act in and read: its id, slug or <org slug>/<slug> "
        "(default: JOBS_PROJECT, else your personal default project; a key's own)",
    )
    return common


def _positive_float(text: str) -> float:
    value = float(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def _positive_int(text: str) -> int:
    value = int(text)
    if value <= 0:
        raise argparse.ArgumentTypeError("must be greater than 0")
    return value


def _statuses(text: str) -> list[str]:
    values = [s.strip() for s in text.split(",") if s.strip()]
    unknown = [s for s in values if s not in JOB_STATUSES]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown status {', '.join(unknown)} (one of {', '.join(JOB_STATUSES)})"
        )
    return values


def _rate(text: str) -> RateLimit:
    try:
        return RateLimit.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


def _concurrency_key(text: str) -> ConcurrencyKey:
    try:
        return ConcurrencyKey.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from exc


#: The settings ``jobs queues set`` may change, by their names in ``client.queues.set``.
QUEUE_SETTINGS = tuple(QueueSettings.__annotations__)


def _queue_settings(parser: argparse.ArgumentParser) -> None:
    """A setting not given stays out of the namespace (``argparse.SUPPRESS``), so only what
    is given is sent; each limit's ``--no-...`` twin writes None to the same place: cleared."""
    limits = (
        ("max-concurrency", "N", int, "running jobs of the queue at most"),
        ("rate", "N/UNIT", _rate, "jobs started at most per second or minute: 20/s, 600/min"),
        ("concurrency-key", "FIELD:K", _concurrency_key, "at most K running per payload[FIELD]"),
    )
    for flag, metavar, kind, help in limits:
        dest = flag.replace("-", "_")
        either = parser.add_mutually_exclusive_group()
        either.add_argument(
            f"--{flag}", dest=dest, type=kind, metavar=metavar, default=argparse.SUPPRESS, help=help
        )
        either.add_argument(
            f"--no-{flag}",
            dest=dest,
            action="store_const",
            const=None,
            default=argparse.SUPPRESS,
            help="remove this limit",
        )
    parser.add_argument(
        "--default-priority",
        type=int,
        choices=(1, 2, 3),
        default=argparse.SUPPRESS,
        help="its jobs' default priority",
    )
    parser.add_argument(
        "--default-timeout",
        dest="default_timeout_seconds",
        type=int,
        metavar="SECONDS",
        default=argparse.SUPPRESS,
        help="its jobs' default timeout",
    )
    parser.add_argument(
        "--default-retry-policy",
        metavar="NAME",
        default=argparse.SUPPRESS,
        help="a stored retry policy's name",
    )


def _job_options(parser: argparse.ArgumentParser) -> None:
    parser.add_argument(
        "--priority",
        type=int,
        choices=(1, 2, 3),
        help="default: a job's queue's default priority, else 2 (a schedule's: 2)",
    )
    parser.add_argument("--max-attempts", type=int, help="1..20 (default: the type's)")
    parser.add_argument("--timeout-seconds", type=int, help="1..1700 (default: the type's)")
    parser.add_argument(
        "--retry-policy", help="the name of a stored policy, or an inline one as JSON"
    )


def build_parser() -> argparse.ArgumentParser:
    common = _common(top=False)
    parser = argparse.ArgumentParser(
        prog="jobs",
        parents=[_common(top=True)],
        description="Submit and follow jobs on the job platform (docs/client.md).",
        epilog="exit codes: 0 done, 1 a job failed or died, 2 usage, 3 not found, 4 auth, "
        "5 refused or unavailable, 6 timed out, 130 interrupted",
    )
    commands = parser.add_subparsers(dest="command", required=True, metavar="COMMAND")

    def command(name: str, help: str) -> argparse.ArgumentParser:
        return commands.add_parser(name, parents=[common], help=help, description=help)

    login = command("login", "log in and store the session (prompts for what is missing)")
    login.add_argument("--email")
    login.add_argument("--password", help="prefer the prompt: arguments show in `ps`")

    command("logout", "revoke the session and delete the session file")

    submit = command("submit", "submit a job")
    submit.add_argument("type", metavar="TYPE")
    submit.add_argument(
        "--payload",
        default="{}",
        help="the payload as JSON, or @FILE to read it from a file (@- for stdin)",
    )
    _job_options(submit)
    when = submit.add_mutually_exclusive_group()
    when.add_argument("--delay", type=float, metavar="SECONDS", help="run this much later")
    when.add_argument("--run-at", metavar="ISO8601", help="run at this time (with an offset)")
    submit.add_argument("--depends-on", action="append", metavar="JOB_ID", default=None)
    submit.add_argument("--idempotency-key", help="default: a new uuid4")
    submit.add_argument("--wait", action="store_true", help="wait and print the finished job")
    submit.add_argument("--timeout", type=_positive_float, help="with --wait: give up after")

    get = command("get", "a job with its result, attempts and timeline")
    get.add_argument("job_id", metavar="ID")

    listing = command("list", "your jobs, newest first")
    listing.add_argument(
        "--status", type=_statuses, action="append", help="repeatable or comma-separated"
    )
    listing.add_argument("--type")
    listing.add_argument("--limit", type=_positive_int, default=20, help="default 20")

    wait = command("wait", "wait for jobs to finish (a progress bar on a terminal)")
    wait.add_argument("job_ids", nargs="+", metavar="ID")
    wait.add_argument("--timeout", type=_positive_float, help="give up after SECONDS")
    wait.add_argument("--poll", action="store_true", help="poll only, no live events socket")

    logs = command("logs", "a job's log lines")
    logs.add_argument("job_id", metavar="ID")
    logs.add_argument("--follow", "-f", action="store_true", help="until the job finished")

    tail = command("tail", "live status changes of your jobs (admins: all) until Ctrl-C")
    tail.add_argument("--count", type=_positive_int, help="stop after this many changes")

    retry = command("retry", "retry a dead job")
    retry.add_argument("job_id", metavar="ID")

    cancel = command("cancel", "cancel a waiting or running job")
    cancel.add_argument("job_id", metavar="ID")
    cancel.add_argument("--reason")

    command("types", "the job types you may submit, their queues and live workers")

    schedules = command("schedules", "cron schedules").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )

    def schedule_action(name: str, help: str) -> argparse.ArgumentParser:
        return schedules.add_parser(name, parents=[common], help=help, description=help)

    schedule_action("list", "your schedules")
    for name, help in (
        ("create", "create a schedule"),
        ("upsert", "create a schedule, or update the one of that name in place (re-runnable)"),
    ):
        create = schedule_action(name, help)
        create.add_argument("name", metavar="NAME")
        create.add_argument("--cron", required=True, help='5 fields, e.g. "*/15 * * * *"')
        create.add_argument("--timezone", default="UTC", help="IANA name (default UTC)")
        create.add_argument("--type", required=True)
        create.add_argument("--payload", default="{}", help="JSON, or @FILE")
        _job_options(create)
    for name, help in (
        ("get", "a schedule with its last fires"),
        ("pause", "pause a schedule"),
        ("resume", "resume a schedule (missed fires are not replayed)"),
        ("delete", "delete a schedule"),
    ):
        schedule_action(name, help).add_argument("schedule_id", metavar="ID")

    queues = command("queues", "the project's queues: limits, pause, resume").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )

    def queue_action(name: str, help: str) -> argparse.ArgumentParser:
        return queues.add_parser(name, parents=[common], help=help, description=help)

    queue_action("list", "the project's queues: paused, running of the limit, rate, waiting")
    setting = queue_action(
        "set", "create a queue, or change the settings given of the one of that name"
    )
    setting.add_argument("queue", metavar="NAME")
    _queue_settings(setting)
    for name, help in (
        ("show", "a queue: its limits, defaults and jobs waiting and running"),
        ("pause", "pause a queue"),
        ("resume", "resume a paused queue"),
        ("delete", "delete a queue (refused while it has unfinished jobs)"),
    ):
        queue_action(name, help).add_argument("queue", metavar="NAME", help="or its id")

    dlq = command("dlq", "dead letters").add_subparsers(
        dest="action", required=True, metavar="ACTION"
    )

    def dlq_action(name: str, help: str) -> argparse.ArgumentParser:
        return dlq.add_parser(name, parents=[common], help=help, description=help)

    letters = dlq_action("list", "dead letters, newest first")
    letters.add_argument("--status", choices=("open", "resolved", "all"), default="open")
    letters.add_argument("--type", help="only this job type")
    letters.add_argument("--limit", type=_positive_int, default=20, help="default 20")
    requeue = dlq_action("requeue", "run a dead letter's job again")
    requeue.add_argument("dead_letter_id", metavar="ID")
    requeue.add_argument("--payload", help="an edited payload: JSON, or @FILE")
    requeue.add_argument("--reason")
    discard = dlq_action("discard", "resolve a dead letter without running it")
    discard.add_argument("dead_letter_id", metavar="ID")
    discard.add_argument("--reason")
    return parser
