"""What each ``jobs`` subcommand does: one function per command, taking the parsed arguments
and the :class:`Context`, returning the exit code. Errors are raised as the client raises
them; :func:`jobs_client.cli.main.main` turns them into messages and exit codes."""

from __future__ import annotations

import getpass
import itertools
import json
import os
import sys
from argparse import Namespace
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from jobs_client.cli import output
from jobs_client.core import API_KEY_ENV, TOKEN_ENV, URL_ENV, resolve_url
from jobs_client.errors import AuthError
from jobs_client.models import Job
from jobs_client.session import Session, SessionFile
from jobs_client.sync_client import JobsClient

# Exit codes (docs/client.md, "Exit codes").
OK = 0
JOB_FAILED = 1
USAGE = 2
NOT_FOUND = 3
AUTH = 4
UNAVAILABLE = 5
TIMED_OUT = 6
INTERRUPTED = 130


class UsageError(Exception):
    """A bad argument found after parsing (unreadable payload file, invalid JSON)."""


@dataclass
class Context:
    args: Namespace
    out: TextIO = field(default_factory=lambda: sys.stdout)
    err: TextIO = field(default_factory=lambda: sys.stderr)
    session_file: SessionFile = field(default_factory=SessionFile)

    @property
    def json(self) -> bool:
        return bool(self.args.json)

    def url(self) -> str:
        """``--url``, else ``JOBS_URL``, else the stored session's, else the default."""
        try:
            if self.args.url or os.environ.get(URL_ENV):
                return resolve_url(self.args.url)
            session = self.session_file.read()
            return resolve_url(session.url if session else None)
        except ValueError as exc:
            raise UsageError(str(exc)) from exc

    def client(self) -> JobsClient:
        """A client for the chosen gateway: ``--api-key`` when given, else ``JOBS_TOKEN``,
        else ``JOBS_API_KEY``, else the stored session when it belongs to that gateway (never
        sent to another one), else none (the first call then raises AuthError: run ``jobs
        login``). ``--project`` (else ``JOBS_PROJECT``) names the project of every call."""
        url = self.url()
        project = self.args.project
        token = os.environ.get(TOKEN_ENV)
        if self.args.api_key:
            return JobsClient(url, api_key=self.args.api_key, project=project)
        if token:
            return JobsClient(url, token=token, project=project)
        if os.environ.get(API_KEY_ENV):
            return JobsClient(url, api_key=os.environ[API_KEY_ENV], project=project)
        session = self.session_file.read()
        if session is not None and session.url == url:
            store = SessionFile(self.session_file.path, url=url)
            return JobsClient(url, token_store=store, project=project)
        return JobsClient(url, project=project)


def read_json(value: str, what: str) -> Any:
    """``value`` as JSON, or the JSON of the file ``@path`` (``@-``: standard input)."""
    try:
        if value.startswith("@"):
            source = value[1:]
            text = sys.stdin.read() if source == "-" else Path(source).read_text(encoding="utf-8")
        else:
            text = value
        return json.loads(text)
    except OSError as exc:
        raise UsageError(f"{what}: cannot read {value[1:]}: {exc.strerror}") from exc
    except ValueError as exc:
        raise UsageError(f"{what}: not valid JSON: {exc}") from exc


def read_payload(value: str) -> dict[str, Any]:
    payload = read_json(value, "--payload")
    if not isinstance(payload, dict):
        raise UsageError("--payload: must be a JSON object")
    return payload


def retry_policy(value: str | None) -> Any:
    if value is None:
        return None
    return read_json(value, "--retry-policy") if value.lstrip().startswith(("{", "@")) else value


def finished_code(jobs: list[Job]) -> int:
    return OK if all(j.succeeded for j in jobs) else JOB_FAILED


# --- session ------------------------------------------------------------------------------


def login(ctx: Context) -> int:
    args = ctx.args
    email = args.email or _prompt("email: ", ctx.err)
    password = args.password or getpass.getpass("password: ")
    url = ctx.url()
    with JobsClient(url, email=email, password=password) as client:
        tokens = client.login()
    ctx.session_file.write(Session(url=url, tokens=tokens))
    if ctx.json:
        output.emit_json({"url": url, "email": tokens.email, "role": tokens.role}, ctx.out)
    else:
        ctx.out.write(f"logged in to {url} as {tokens.email} ({tokens.role})\n")
        ctx.out.write(f"session stored in {ctx.session_file.path}\n")
    return OK


def _prompt(text: str, err: TextIO) -> str:
    err.write(text)
    err.flush()
    line = sys.stdin.readline()
    if not line:
        raise UsageError("no email given (--email)")
    return line.strip()


def logout(ctx: Context) -> int:
    if ctx.session_file.read() is not None:
        with ctx.client() as client:
            try:
                client.logout()
            except AuthError:
                pass  # already revoked or expired: deleting the file is what is left
    removed = ctx.session_file.delete()
    if ctx.json:
        output.emit_json({"loggedOut": removed}, ctx.out)
    else:
        ctx.out.write("logged out\n" if removed else "no session\n")
    return OK


# --- jobs ---------------------------------------------------------------------------------


def submit(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        submitted = client.submit(
            args.type,
            read_payload(args.payload),
            priority=args.priority,
            run_at=args.run_at,
            delay=args.delay,
            max_attempts=args.max_attempts,
            timeout_seconds=args.timeout_seconds,
            retry_policy=retry_policy(args.retry_policy),
            depends_on=args.depends_on,
            idempotency_key=args.idempotency_key,
        )
        if not args.wait:
            if ctx.json:
                output.emit_json(
                    {
                        "jobId": submitted.job_id,
                        "status": submitted.status,
                        "idempotencyKey": submitted.idempotency_key,
                    },
                    ctx.out,
                )
            else:
                ctx.out.write(f"{submitted.job_id}\n")
            return OK
        job = client.wait(submitted.job_id, timeout=args.timeout)
    _show_job(ctx, job)
    return finished_code([job])


def _show_job(ctx: Context, job: Job) -> None:
    if ctx.json:
        output.emit_json(job.raw, ctx.out)
    else:
        output.job_block(job, ctx.out)


def get(ctx: Context) -> int:
    with ctx.client() as client:
        _show_job(ctx, client.get(ctx.args.job_id))
    return OK


def list_jobs(ctx: Context) -> int:
    args = ctx.args
    statuses = list(itertools.chain.from_iterable(args.status)) if args.status else None
    with ctx.client() as client:
        jobs = list(
            client.list(
                status=statuses,
                type=args.type,
                limit=args.limit,
                page_size=min(args.limit, 100),
            )
        )
    if ctx.json:
        output.emit_json([j.raw for j in jobs], ctx.out)
    else:
        output.table(output.JOB_HEADERS, output.job_rows(jobs), ctx.out)
    return OK


def wait(ctx: Context) -> int:
    args = ctx.args
    bar = output.ProgressBar(ctx.err)
    try:
        with ctx.client() as client:
            jobs = client.wait(
                list(args.job_ids), timeout=args.timeout, live=not args.poll, on_progress=bar
            )
    finally:
        bar.close()
    if ctx.json:
        output.emit_json([j.raw for j in jobs], ctx.out)
    else:
        rows = [[j.id, j.type, j.status, j.last_error or ""] for j in jobs]
        output.table(("ID", "TYPE", "STATUS", "LAST ERROR"), rows, ctx.out)
    return finished_code(jobs)


def logs(ctx: Context) -> int:
    with ctx.client() as client:
        for line in client.logs(ctx.args.job_id, follow=ctx.args.follow):
            if ctx.json:
                output.emit_json(line.raw, ctx.out, compact=True)
            else:
                output.log_line(line, ctx.out)
    return OK


def tail(ctx: Context) -> int:
    count = ctx.args.count
    with ctx.client() as client:
        client.list_page(page_size=1)  # fail now on a bad session, not on the socket later
        for seen, change in enumerate(client.events(), start=1):
            if ctx.json:
                output.emit_json(change.raw, ctx.out, compact=True)
            else:
                output.change_line(change, ctx.out)
            if count is not None and seen >= count:
                break
    return OK


def retry(ctx: Context) -> int:
    with ctx.client() as client:
        accepted = client.retry(ctx.args.job_id)
    return _accepted(ctx, {"jobId": accepted.job_id, "status": accepted.status})


def cancel(ctx: Context) -> int:
    with ctx.client() as client:
        outcome = client.cancel(ctx.args.job_id, reason=ctx.args.reason)
    return _accepted(ctx, {"jobId": outcome.job_id, "status": outcome.status})


def _accepted(ctx: Context, body: dict[str, Any]) -> int:
    if ctx.json:
        output.emit_json(body, ctx.out)
    else:
        ctx.out.write(f"{body['jobId']}: {body['status'].replace('_', ' ')}\n")
    return OK


def types(ctx: Context) -> int:
    with ctx.client() as client:
        found = client.job_types()
    if ctx.json:
        output.emit_json([t.raw for t in found], ctx.out)
    else:
        output.table(output.JOB_TYPE_HEADERS, output.job_type_rows(found), ctx.out)
    return OK


# --- schedules ----------------------------------------------------------------------------


def schedules(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        if args.action == "list":
            found = list(client.list_schedules())
            if ctx.json:
                output.emit_json([s.raw for s in found], ctx.out)
            else:
                output.table(output.SCHEDULE_HEADERS, output.schedule_rows(found), ctx.out)
            return OK
        if args.action == "delete":
            client.delete_schedule(args.schedule_id)
            if ctx.json:
                output.emit_json({"id": args.schedule_id, "deleted": True}, ctx.out)
            else:
                ctx.out.write(f"{args.schedule_id}: deleted\n")
            return OK
        actions: dict[str, Callable[[], Any]] = {
            "get": lambda: client.get_schedule(args.schedule_id),
            "pause": lambda: client.pause_schedule(args.schedule_id),
            "resume": lambda: client.resume_schedule(args.schedule_id),
            "create": lambda: client.create_schedule(
                args.name,
                args.cron,
                type=args.type,
                payload=read_payload(args.payload),
                timezone=args.timezone,
                priority=2 if args.priority is None else args.priority,
                max_attempts=args.max_attempts,
                timeout_seconds=args.timeout_seconds,
                retry_policy=retry_policy(args.retry_policy),
            ),
            "upsert": lambda: client.upsert_schedule(
                args.name,
                args.type,
                read_payload(args.payload),
                cron=args.cron,
                timezone=args.timezone,
                priority=2 if args.priority is None else args.priority,
                max_attempts=args.max_attempts,
                timeout_seconds=args.timeout_seconds,
                retry_policy=retry_policy(args.retry_policy),
            ),
        }
        schedule = actions[args.action]()
    if ctx.json:
        output.emit_json(schedule.raw, ctx.out)
    else:
        output.table(output.SCHEDULE_HEADERS, output.schedule_rows([schedule]), ctx.out)
    return OK


# --- dead letters -------------------------------------------------------------------------


def dlq(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        if args.action == "list":
            letters = list(
                itertools.islice(
                    client.list_dead_letters(
                        status=args.status, job_type=args.type, page_size=min(args.limit, 100)
                    ),
                    args.limit,
                )
            )
            if ctx.json:
                output.emit_json([d.raw for d in letters], ctx.out)
            else:
                output.table(output.DEAD_LETTER_HEADERS, output.dead_letter_rows(letters), ctx.out)
            return OK
        if args.action == "requeue":
            payload = read_payload(args.payload) if args.payload is not None else None
            accepted = client.requeue_dead_letter(
                args.dead_letter_id, payload=payload, reason=args.reason
            )
            body = {
                "deadLetterId": accepted.dead_letter_id,
                "jobId": accepted.job_id,
                "status": accepted.status,
            }
            return _accepted(ctx, body)
        letter = client.discard_dead_letter(args.dead_letter_id, reason=args.reason)
    if ctx.json:
        output.emit_json(letter.raw, ctx.out)
    else:
        ctx.out.write(f"{letter.id}: {letter.resolution or 'discarded'}\n")
    return OK


COMMANDS: dict[str, Callable[[Context], int]] = {
    "login": login,
    "logout": logout,
    "submit": submit,
    "get": get,
    "list": list_jobs,
    "wait": wait,
    "logs": logs,
    "tail": tail,
    "retry": retry,
    "cancel": cancel,
    "types": types,
    "schedules": schedules,
    "dlq": dlq,
}
