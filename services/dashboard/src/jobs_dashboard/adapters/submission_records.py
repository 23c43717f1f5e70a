"""Whether the submission service accepted a job, asked over HTTP: a job id the job store
does not hold yet is either one the scheduler is about to record (accepted a moment ago)
or none at all, and only the first is worth waiting for."""

from __future__ import annotations

import uuid

import httpx

from jobs_common.auth import Identity


class SubmissionRecords:
    def __init__(self, client: httpx.AsyncClient, *, internal_token: str) -> None:
        self.client = client
        self.internal_token = internal_token

    async def accepted(self, job_id: uuid.UUID, *, identity: Identity) -> bool | None:
        """True: accepted and visible to ``identity``; False: not (404); None: the submission
        service did not say (unreachable, or another answer)."""
        try:
            answer = await self.client.get(
                f"/api/v1/jobs/{job_id}/status", headers=identity.headers(self.internal_token)
            )
        except httpx.HTTPError:
            return None
        if answer.status_code == 200:
            return True
        return False if answer.status_code == 404 else None
