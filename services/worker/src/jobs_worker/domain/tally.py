"""What this worker process has run: attempts that reached an outcome, and those that
failed (Flower's processed / failed), reported in every heartbeat.

The counts are cumulative since the process started, so the scheduler can store the latest
heartbeat's numbers as they are: a heartbeat applied twice or late never counts an attempt
twice, and a new process (a new worker id) starts from zero in a row of its own. Only
attempts whose handler ran are counted; a delivery handed back, refused as cancelled before
it started, or acked as a duplicate is not."""

from __future__ import annotations

from dataclasses import dataclass

from jobs_sdk.outcomes import OutcomeName


@dataclass
class Tally:
    processed: int = 0
    failed: int = 0

    def record(self, outcome: OutcomeName) -> None:
        """One attempt ran to ``outcome`` and its result was confirmed."""
        self.processed += 1
        if outcome == "failed":
            self.failed += 1
