"""New ids of rows that PostgreSQL indexes: jobs, batches, messages (and so log lines).

A uuid4 puts each new key at a random place of every index that leads with it (the jobs'
primary key, their attempts', events' and log lines' indexes by job). Once those indexes
outgrow PostgreSQL's shared buffers, each new job reads a page per index from outside them,
and the first change of each page after a checkpoint writes the whole page to the WAL: with
a million jobs of history the bench measured 5 block reads and 12-40 kB of WAL per job
against 0.5 and 7 kB on an empty store (docs/performance.md).

So the first byte of an id is the time (4-second buckets, a cycle of 17 minutes) and the
other 122 bits are random: the keys written in the same seconds fall in one 256th of each
index, a few pages that stay in shared buffers. The id as shown (its first 8 hex digits)
still has 24 random bits, and across a cycle the ids spread over the whole key space as
uuid4s do. Unlike UUIDv7 (a 48-bit timestamp first), jobs submitted together do not share
their shown prefix. Marked version 8 (RFC 9562: laid out by the application).
"""

from __future__ import annotations

import os
import threading
import time
import uuid
from collections.abc import Callable

BUCKET_SECONDS = 4
VERSION = 8
_POOL_BYTES = 4096  # 256 ids per read of the kernel's random source

# The id's bits apart from its first byte, its version and its variant: (~0) with those 0.
_RANDOM_BITS = ~((0xFF << 120) | (0xF << 76) | (0x3 << 62)) & ((1 << 128) - 1)
_VERSION_AND_VARIANT = (VERSION << 76) | (0x2 << 62)


class _RandomPool(threading.local):
    """Random bytes read 4 KiB at a time, one pool per thread: a worker publishes several
    messages per job, each with a new id, and one ``getrandom`` call per id was a tenth of
    the cost of making it (strace, py-spy). Emptied in a forked child, which must never
    hand out its parent's bytes again."""

    def __init__(self) -> None:
        self.reset()

    def reset(self) -> None:
        self.buffer = b""
        self.offset = 0

    def take16(self) -> int:
        if self.offset + 16 > len(self.buffer):
            self.buffer, self.offset = os.urandom(_POOL_BYTES), 0
        start = self.offset
        self.offset = start + 16
        return int.from_bytes(self.buffer[start : start + 16], "big")


_pool = _RandomPool()
os.register_at_fork(after_in_child=_pool.reset)


def new_id(clock: Callable[[], float] = time.time) -> uuid.UUID:
    bucket = int(clock() // BUCKET_SECONDS) & 0xFF
    return uuid.UUID(int=(bucket << 120) | (_pool.take16() & _RANDOM_BITS) | _VERSION_AND_VARIANT)
