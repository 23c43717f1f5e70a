"""``jobs queues``: the project's queues (list, show, set, pause, resume, delete), a command
of its own beside :mod:`jobs_client.cli.commands`, with the same :class:`Context` and exit
codes."""

from __future__ import annotations

from collections.abc import Callable

from jobs_client import queue_calls
from jobs_client.cli import output
from jobs_client.cli.commands import OK, Context
from jobs_client.cli.parser import QUEUE_SETTINGS
from jobs_client.queue_models import Queue
from jobs_client.sync_client import JobsClient


def queues(ctx: Context) -> int:
    args = ctx.args
    with ctx.client() as client:
        if args.action == "list":
            found = list(client.queues.list())
            if ctx.json:
                output.emit_json([q.raw for q in found], ctx.out)
            else:
                output.table(output.QUEUE_HEADERS, output.queue_rows(found), ctx.out)
            return OK
        if args.action == "delete":
            gone = _queue(client, args.queue)
            client.queues.delete(gone.id)
            if ctx.json:
                output.emit_json({"id": gone.id, "name": gone.name, "deleted": True}, ctx.out)
            else:
                ctx.out.write(f"{gone.name}: deleted\n")
            return OK
        # Only the settings given are in the namespace (parser._queue_settings).
        settings = {name: getattr(args, name) for name in QUEUE_SETTINGS if name in args}
        actions: dict[str, Callable[[], Queue]] = {
            "show": lambda: _queue(client, args.queue),
            "set": lambda: client.queues.set(args.queue, **settings),
            "pause": lambda: client.queues.pause(args.queue),
            "resume": lambda: client.queues.resume(args.queue),
        }
        queue = actions[args.action]()
    if ctx.json:
        output.emit_json(queue.raw, ctx.out)
    elif args.action in ("pause", "resume"):
        ctx.out.write(f"{queue.name}: {'paused' if queue.paused else 'active'}\n")
    else:
        output.queue_block(queue, ctx.out)
    return OK


def _queue(client: JobsClient, queue: str) -> Queue:
    """The project's queue of that name (or id)."""
    if queue_calls.is_queue_id(queue):
        return client.queues.get(queue)
    found = client.queues.by_name(queue)
    if found is None:
        raise queue_calls.no_such_queue(queue)
    return found


COMMANDS: dict[str, Callable[[Context], int]] = {"queues": queues}
