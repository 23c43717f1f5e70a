import { describe, expect, it } from 'vitest';
import { queryKeys } from '../../api/queryKeys';
import { affectedKeys, isAggregate } from '../../live/cache';
import type { JobChange } from '../../live/protocol';

const change = (fromStatus: string | null, toStatus: string): JobChange => ({
  jobId: 'j1',
  attempt: 1,
  fromStatus,
  toStatus,
  reason: 'test',
  jobType: 'email',
  at: '',
});

const refreshesWorkers = (changes: JobChange[]) =>
  affectedKeys(changes).some((key) => JSON.stringify(key) === JSON.stringify(queryKeys.workers));

describe('the Workers page on the live socket', () => {
  it('refreshes when a job starts or ends on a worker, and only then', () => {
    expect(refreshesWorkers([change('queued', 'running')])).toBe(true);
    expect(refreshesWorkers([change('running', 'succeeded')])).toBe(true);
    expect(refreshesWorkers([change('pending', 'queued'), change('scheduled', 'queued')])).toBe(false);
    expect(isAggregate(queryKeys.workers)).toBe(true); // throttled like the other summaries
  });
});
