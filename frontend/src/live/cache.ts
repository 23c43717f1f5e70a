/**
 * How live job changes reach the TanStack Query cache: cached rows are patched at once (so a
 * table shows the new status without a request), and the queries whose shape depends on the
 * change are invalidated, throttled so that a burst of events causes one refetch per key.
 */
import type { QueryClient, QueryKey } from '@tanstack/react-query';
import { queryKeys } from '../api/queryKeys';
import type { JobDetail, JobStatus, JobsPage } from '../api/types';
import { JOB_STATUSES } from '../api/types';
import type { JobChange } from './protocol';

function isStatus(value: string): value is JobStatus {
  return (JOB_STATUSES as readonly string[]).includes(value);
}

/** Patch the status of jobs that are in cached lists and details. */
export function patchJobCaches(client: QueryClient, changes: readonly JobChange[]): void {
  const latest = new Map<string, JobChange>();
  for (const change of changes) latest.set(change.jobId, change);
  client.setQueriesData<JobsPage>({ queryKey: queryKeys.jobLists }, (page) => {
    if (!page) return page;
    const items = page.items.map((job) => {
      const change = latest.get(job.jobId);
      if (!change || !isStatus(change.toStatus) || job.status === change.toStatus) return job;
      return { ...job, status: change.toStatus, attempt: Math.max(job.attempt, change.attempt), updatedAt: change.at };
    });
    return items.some((job, i) => job !== page.items[i]) ? { ...page, items } : page;
  });
  for (const change of latest.values()) {
    if (!isStatus(change.toStatus)) continue;
    const status = change.toStatus;
    client.setQueryData<JobDetail>(queryKeys.jobDetail(change.jobId), (job) =>
      job && job.status !== status ? { ...job, status, attempt: Math.max(job.attempt, change.attempt) } : job,
    );
  }
  // A cached job page lists its children with their statuses: keep those current too.
  client.setQueriesData<JobDetail>({ queryKey: queryKeys.jobDetails }, (job) => {
    if (!job || job.children.length === 0) return job;
    const children = job.children.map((child) => {
      const change = latest.get(child.jobId);
      return change && isStatus(change.toStatus) && child.status !== change.toStatus
        ? { ...child, status: change.toStatus }
        : child;
    });
    return children.some((child, i) => child !== job.children[i]) ? { ...job, children } : job;
  });
}

/** The query prefixes a batch of changes makes stale. */
export function affectedKeys(changes: readonly JobChange[]): QueryKey[] {
  const keys: QueryKey[] = [queryKeys.jobLists, queryKeys.analytics, queryKeys.queues, queryKeys.batches];
  let deadLetters = false;
  let schedules = false;
  for (const change of changes) {
    keys.push(queryKeys.jobDetail(change.jobId));
    keys.push(queryKeys.jobLogs(change.jobId));
    if (change.toStatus === 'dead' || change.fromStatus === 'dead') deadLetters = true;
    if (change.reason.includes('schedule') || change.fromStatus === null) schedules = true;
  }
  if (deadLetters) keys.push(queryKeys.deadLetters);
  if (schedules) keys.push(queryKeys.schedules);
  return keys;
}

const AGGREGATES = new Set(['analytics', 'queues', 'batches', 'dead-letters', 'schedules']);

/** Queries that summarize many jobs: refreshed less often than rows and details. */
export function isAggregate(key: QueryKey): boolean {
  return typeof key[0] === 'string' && AGGREGATES.has(key[0]);
}

/** Collects keys and invalidates them at most once per `intervalMs` (leading + trailing). */
export class ThrottledInvalidator {
  private pending = new Map<string, QueryKey>();
  private timer: ReturnType<typeof setTimeout> | null = null;
  private lastFlush = -Infinity;

  constructor(
    private readonly client: QueryClient,
    private readonly intervalMs = 1_000,
  ) {}

  add(keys: readonly QueryKey[]): void {
    for (const key of keys) this.pending.set(JSON.stringify(key), key);
    if (this.timer !== null) return;
    const wait = Math.max(0, this.lastFlush + this.intervalMs - Date.now());
    this.timer = setTimeout(() => this.flush(), wait);
  }

  flush(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.lastFlush = Date.now();
    const keys = [...this.pending.values()];
    this.pending.clear();
    for (const queryKey of keys) {
      void this.client.invalidateQueries({ queryKey });
    }
  }

  dispose(): void {
    if (this.timer !== null) clearTimeout(this.timer);
    this.timer = null;
    this.pending.clear();
  }
}
