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
import time
import uuid
from collections.abc import Callable

BUCKET_SECONDS = 4
VERSION = 8


def new_id(clock: Callable[[], float] = time.time) -> uuid.UUID:
    raw = bytearray(os.urandom(16))
    raw[0] = int(clock() // BUCKET_SECONDS) & 0xFF
    raw[6] = (raw[6] & 0x0F) | (VERSION << 4)
    raw[8] = (raw[8] & 0x3F) | 0x80  # the RFC's variant
    return uuid.UUID(bytes=bytes(raw))
