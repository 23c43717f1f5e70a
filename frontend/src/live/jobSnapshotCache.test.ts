/** Live changes and a job page's cached snapshot (live/cache.ts): read again, never patched. */
import { describe, expect, it } from 'vitest';
import { queryKeys } from '../api/queryKeys';
import type { JobSnapshot } from '../api/types';
import { scopedKey } from '../project/useScopedQuery';
import { jobDetail } from '../test/jobs';
import { testQueryClient } from '../test/utils';
import { affectedKeys, cachedJob, patchJobCaches } from './cache';
import type { JobChange } from './protocol';

const JOB = 'eeeeeeee-0000-4000-8000-000000000005';
const CHILD = 'eeeeeeee-0000-4000-8000-000000000006';

function change(jobId: string, fromStatus: string, toStatus: string, attempt = 1): JobChange {
  return { jobId, attempt, fromStatus, toStatus, reason: '', jobType: 'simulate', at: '' };
}

describe("a job page's snapshot and live changes", () => {
  it('is made stale by a change of its job, in every project it is cached for', () => {
    const keys = affectedKeys([change(JOB, 'queued', 'running')]).map((key) => JSON.stringify(key));
    expect(keys).toContain(JSON.stringify(queryKeys.jobSnapshot(JOB)));
  });

  it("is not patched from the event: its header, timeline and attempts stay one read's", () => {
    const client = testQueryClient();
    const key = scopedKey(queryKeys.jobSnapshot(JOB), null);
    const snapshot: JobSnapshot = { state: 'recorded', job: jobDetail(JOB, 'queued') };
    client.setQueryData(key, snapshot);
    patchJobCaches(client, [change(JOB, 'queued', 'running')]);
    expect(client.getQueryData(key)).toBe(snapshot);
  });

  it("keeps the statuses of the children it lists current (each is its child's own fact)", () => {
    const client = testQueryClient();
    const key = scopedKey(queryKeys.jobSnapshot(JOB), 'p-alpha');
    const job = jobDetail(JOB, 'succeeded', { children: [{ jobId: CHILD, type: 'simulate', status: 'blocked' }], childrenTotal: 1 });
    client.setQueryData<JobSnapshot>(key, { state: 'recorded', job });
    patchJobCaches(client, [change(CHILD, 'blocked', 'queued')]);
    const patched = client.getQueryData<JobSnapshot>(key);
    expect(patched?.job?.status).toBe('succeeded');
    expect(patched?.job?.children.map((child) => child.status)).toEqual(['queued']);
    client.setQueryData<JobSnapshot>(key, { state: 'accepted', job: null });
    const notYet = client.getQueryData(key);
    patchJobCaches(client, [change(CHILD, 'queued', 'running')]);
    expect(client.getQueryData(key)).toBe(notYet);
  });

  it('holds the job when recorded, for the follower to check against a change', () => {
    const job = jobDetail(JOB, 'running');
    expect(cachedJob({ state: 'recorded', job })).toBe(job);
    expect(cachedJob({ state: 'accepted', job: null })).toBeUndefined();
    expect(cachedJob(job)).toBe(job);
    expect(cachedJob(undefined)).toBeUndefined();
  });
});
