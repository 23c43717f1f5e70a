"""Single submissions inserted together: what arrives while an insert is on its way to MongoDB
goes in the next one, as one ``insert_many(ordered=False)``.

Under load dozens of requests insert one document each at the same moment; each insert is a
round trip, a socket write and a command for the server to decode and dispatch. Grouped, a
round trip carries every document that arrived meanwhile (at most ``max_batch``), with no
waiting added: a document that arrives while nothing is in flight goes at once, alone. Each
document still succeeds or fails on its own: ``ordered=False`` goes on past a failed one,
and a request whose document collided with a unique key (its Idempotency-Key, or an id)
gets the same ``DuplicateKeyError`` a lone insert raises. An error of the whole round trip
(a connection lost) is every waiting request's error, as it would have been for each alone.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from pymongo.errors import BulkWriteError, DuplicateKeyError, WriteError

Document = dict[str, Any]
InsertMany = Callable[[Sequence[Document]], Awaitable[None]]
DUPLICATE_KEY = 11000


@dataclass
class GroupInsert:
    insert_many: InsertMany  # unordered: raises BulkWriteError with each failed index
    max_batch: int = 256
    _waiting: list[tuple[Document, asyncio.Future[None]]] = field(default_factory=list)
    _flusher: asyncio.Task[None] | None = None

    async def insert(self, document: Document) -> None:
        """Store ``document``, with whatever else is waiting; raises what its insert raised."""
        done = asyncio.get_running_loop().create_future()
        self._waiting.append((document, done))
        if self._flusher is None or self._flusher.done():
            self._flusher = asyncio.create_task(self._flush(), name="submission-group-insert")
        await done

    async def _flush(self) -> None:
        while self._waiting:
            group, self._waiting = (
                self._waiting[: self.max_batch],
                self._waiting[self.max_batch :],
            )
            try:
                await self.insert_many([document for document, _ in group])
            except BulkWriteError as exc:
                failed = {
                    int(error["index"]): error for error in exc.details.get("writeErrors", [])
                }
                for index, (_, done) in enumerate(group):
                    error = failed.get(index)
                    _settle(done, None if error is None else _write_error(error))
            except asyncio.CancelledError:  # shut down: no one waits for an answer forever
                for _, done in group + self._waiting:
                    done.cancel()
                self._waiting = []
                raise
            except Exception as exc:  # every waiter gets it, as each would have alone
                for _, done in group:
                    _settle(done, exc)
            else:
                for _, done in group:
                    _settle(done, None)


def _write_error(error: dict[str, Any]) -> WriteError:
    message = str(error.get("errmsg", "write error"))
    if error.get("code") == DUPLICATE_KEY:
        return DuplicateKeyError(message, DUPLICATE_KEY, error)
    return WriteError(message, error.get("code"), error)


def _settle(done: asyncio.Future[None], error: BaseException | None) -> None:
    if done.done():  # its request was cancelled meanwhile
        return
    if error is None:
        done.set_result(None)
    else:
        done.set_exception(error)
