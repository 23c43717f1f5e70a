"""Artifact files written atomically: a temporary file in the same directory, fsync, rename."""

from __future__ import annotations

import hashlib
import os
import uuid
from dataclasses import dataclass
from pathlib import Path


@dataclass(frozen=True)
class Artifact:
    path: Path
    bytes: int
    sha256: str


def artifact_key(job_id: uuid.UUID, attempt: int, ext: str) -> str:
    """Where an attempt's file lives under the artifacts directory (``WORKER_ARTIFACTS_DIR``):
    what a result names. The worker's own path of it stays in the worker's log."""
    return f"{job_id}/attempt-{attempt}.{ext}"


def artifact_path(root: Path, job_id: uuid.UUID, attempt: int, ext: str) -> Path:
    return root / artifact_key(job_id, attempt, ext)


def write_atomically(path: Path, data: bytes) -> Artifact:
    """Write ``data`` to ``path`` so readers see the old file or the whole new one, never a
    partial write (blocking: call it in a thread)."""
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f".{path.name}.{uuid.uuid4().hex}.tmp")
    try:
        with tmp.open("wb") as handle:
            handle.write(data)
            handle.flush()
            os.fsync(handle.fileno())
        os.replace(tmp, path)
    except BaseException:
        tmp.unlink(missing_ok=True)
        raise
    return Artifact(path=path.resolve(), bytes=len(data), sha256=hashlib.sha256(data).hexdigest())
