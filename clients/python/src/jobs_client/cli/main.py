"""``jobs``: parse, run the subcommand, and turn what went wrong into one line on stderr and
an exit code that says what happened (``jobs --help`` lists them; docs/client.md)."""

from __future__ import annotations

import os
import sys
from collections.abc import Sequence
from typing import TextIO

from jobs_client.cli import commands, queue_commands
from jobs_client.cli.commands import Context, UsageError
from jobs_client.cli.output import emit_json
from jobs_client.cli.parser import build_parser
from jobs_client.errors import (
    AuthError,
    JobsError,
    NotFound,
    ValidationError,
    WaitTimeout,
)
from jobs_client.session import SessionFile

COMMANDS = commands.COMMANDS | queue_commands.COMMANDS


def exit_code(error: BaseException) -> int:
    if isinstance(error, UsageError | ValidationError):
        return commands.USAGE
    if isinstance(error, NotFound):
        return commands.NOT_FOUND
    if isinstance(error, AuthError):
        return commands.AUTH
    if isinstance(error, WaitTimeout):
        return commands.TIMED_OUT
    return commands.UNAVAILABLE


def report(error: Exception, err: TextIO, *, as_json: bool) -> None:
    """The error on stderr: a line for people, the API's envelope for ``--json``."""
    if as_json:
        if isinstance(error, JobsError):
            body = {**error.envelope, "status": error.status}
        else:
            body = {"error": "usage", "message": str(error), "details": []}
        emit_json(body, err, compact=True)
        return
    err.write(f"jobs: {error}\n")
    if isinstance(error, AuthError) and error.status == 401:
        err.write("jobs: log in with `jobs login` (or set JOBS_TOKEN)\n")


def run(
    argv: Sequence[str] | None = None,
    *,
    out: TextIO | None = None,
    err: TextIO | None = None,
    session_file: SessionFile | None = None,
) -> int:
    """Run one command; the exit code (argparse's own usage errors exit 2 themselves)."""
    args = build_parser().parse_args(argv)
    ctx = Context(
        args,
        out=out or sys.stdout,
        err=err or sys.stderr,
        session_file=session_file or SessionFile(),
    )
    try:
        return COMMANDS[args.command](ctx)
    except KeyboardInterrupt:
        return commands.OK if args.command == "tail" else commands.INTERRUPTED
    except (JobsError, UsageError) as error:
        report(error, ctx.err, as_json=ctx.json)
        return exit_code(error)


def main() -> None:
    try:
        code = run()
    except BrokenPipeError:
        # The reader went away (`jobs logs ID --json | head -1`): stop quietly, and keep
        # Python from complaining about the closed stdout at exit.
        os.dup2(os.open(os.devnull, os.O_WRONLY), sys.stdout.fileno())
        code = commands.OK
    sys.exit(code)
