/**
 * How live job changes reach the TanStack Query cache: cached rows are patched at once (so a
 * table shows the new status without a request), and the queries whose shape depends on the
 * change are invalidated, throttled so that a burst of events causes one refetch per key.
 */
import type { QueryClient, QueryKey } from '@tanstack/react-query';
import { queryKeys } from '../api/queryKeys';
import type { JobDetail, JobSnapshot, JobStatus, JobsPage } from '../api/types';
import { JOB_STATUSES, TERMINAL_STATUSES } from '../api/types';
import type { JobChange } from './protocol';

function isStatus(value: string): value is JobStatus {
  return (JOB_STATUSES as readonly string[]).includes(value);
}

/**
 * Patch the status of jobs that are in cached lists and details. A job page's snapshot is not
 * patched (its header, timeline and attempts change together when it is read again), except
 * for the statuses of the children it lists: each is another job's own fact.
 */
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
    // the job's page in every project it is cached for (its key ends with the project)
    client.setQueriesData<JobDetail>({ queryKey: queryKeys.jobDetail(change.jobId) }, (job) => {
      if (!job || (job.status === status && change.attempt <= job.attempt)) return job;
      // the progress read belongs to the attempt as it ran then (a retry starts at "running"
      // again): the refetch brings the new attempt's
      return { ...job, status, attempt: Math.max(job.attempt, change.attempt), progress: null };
    });
  }
  // A cached job page lists its children with their statuses: keep those current too.
  const withChildren = (job: JobDetail): JobDetail => {
    if (job.children.length === 0) return job;
    const children = job.children.map((child) => {
      const change = latest.get(child.jobId);
      return change && isStatus(change.toStatus) && child.status !== change.toStatus
        ? { ...child, status: change.toStatus }
        : child;
    });
    return children.some((child, i) => child !== job.children[i]) ? { ...job, children } : job;
  };
  client.setQueriesData<JobDetail>({ queryKey: queryKeys.jobDetails }, (job) => job && withChildren(job));
  client.setQueriesData<JobSnapshot>({ queryKey: queryKeys.jobSnapshots }, (snapshot) => {
    if (!snapshot?.job) return snapshot;
    const job = withChildren(snapshot.job);
    return job === snapshot.job ? snapshot : { ...snapshot, job };
  });
}

/** The query prefixes a batch of changes makes stale. */
export function affectedKeys(changes: readonly JobChange[]): QueryKey[] {
  // queues: the queue depths and a project's queues (their jobs running and waiting)
  const keys: QueryKey[] = [queryKeys.jobLists, queryKeys.analytics, queryKeys.queues, queryKeys.batches];
  let deadLetters = false;
  let schedules = false;
  let workers = false;
  for (const change of changes) {
    keys.push(queryKeys.jobDetail(change.jobId));
    keys.push(queryKeys.jobSnapshot(change.jobId));
    keys.push(queryKeys.jobLogs(change.jobId));
    if (change.toStatus === 'dead' || change.fromStatus === 'dead') deadLetters = true;
    if (change.reason.includes('schedule') || change.fromStatus === null) schedules = true;
    // the Workers page lists what each worker runs: a start or an end changes it
    if (change.toStatus === 'running' || change.fromStatus === 'running') workers = true;
  }
  if (deadLetters) keys.push(queryKeys.deadLetters);
  if (schedules) keys.push(queryKeys.schedules);
  if (workers) keys.push(queryKeys.workers);
  return keys;
}

const AGGREGATES = new Set(['analytics', 'queues', 'batches', 'dead-letters', 'schedules', 'workers']);

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

/** The job a cached detail or page snapshot holds (none: not recorded yet, or not found). */
export function cachedJob(data: JobDetail | JobSnapshot | undefined): JobDetail | undefined {
  if (data === undefined) return undefined;
  return 'state' in data ? (data.job ?? undefined) : data;
}

/** Whether a job as the API answered it holds `change`: its timeline records that move. */
export function recordsChange(job: JobDetail, change: JobChange): boolean {
  return job.timeline.some((entry) => entry.toStatus === change.toStatus && entry.attempt === change.attempt);
}

interface Expected {
  change: JobChange;
  checks: number;
  timer: ReturnType<typeof setTimeout>;
}

/**
 * Makes a cached job detail or a job page's snapshot (header, timeline, attempts, result)
 * catch up with the live changes of its job. The throttled invalidation reads the job again,
 * but that answer can predate the change: a refetch asked while the page's first
 * request is still in flight joins that request, read before the change was committed; a
 * request can also fail. So after each change the detail is checked once the refetch had its
 * time (`checkAfterMs`), and while its timeline does not record the change the job (and, once
 * it ended, its stored log) is fetched again, the wait doubling each time, at most `maxChecks`
 * times. A newer change of the job replaces the one awaited. A job's detail is cached per
 * project the console followed (the key ends with it): each one shown or loading is followed.
 */
export class JobDetailFollower {
  private expected = new Map<string, Expected>();

  constructor(
    private readonly client: QueryClient,
    private readonly checkAfterMs = 2_000,
    private readonly maxChecks = 6,
  ) {}

  private details(jobId: string) {
    const cache = this.client.getQueryCache();
    return [
      ...cache.findAll({ queryKey: queryKeys.jobDetail(jobId) }),
      ...cache.findAll({ queryKey: queryKeys.jobSnapshot(jobId) }),
    ];
  }

  expect(changes: readonly JobChange[]): void {
    for (const change of changes) {
      // only jobs someone shows (or is loading) are worth following
      if (this.details(change.jobId).length === 0) continue;
      this.forget(change.jobId);
      const timer = setTimeout(() => this.check(change.jobId), this.checkAfterMs);
      this.expected.set(change.jobId, { change, checks: 0, timer });
    }
  }

  private check(jobId: string): void {
    const entry = this.expected.get(jobId);
    if (!entry) return;
    entry.checks += 1;
    const terminal = TERMINAL_STATUSES.includes(entry.change.toStatus as JobStatus);
    // nothing shown to catch up where no answer came and none is on its way (e.g. a 404)
    const shown = this.details(jobId).filter(
      (query) => !(query.state.data === undefined && query.state.fetchStatus === 'idle'),
    );
    if (shown.length === 0) {
      this.expected.delete(jobId);
      return;
    }
    const behind = shown.filter((query) => {
      const job = cachedJob(query.state.data as JobDetail | JobSnapshot | undefined);
      return !(job && recordsChange(job, entry.change));
    });
    if (behind.length === 0) {
      this.expected.delete(jobId); // caught up
      // The detail may have caught up by another read (the page's own polling) while its
      // stored log was read before the job's last lines: read the log of an ended job once more.
      if (terminal) void this.client.invalidateQueries({ queryKey: queryKeys.jobLogs(jobId) });
      return;
    }
    if (entry.checks >= this.maxChecks) {
      this.expected.delete(jobId);
      return;
    }
    const idle = behind.filter((query) => query.state.fetchStatus === 'idle');
    for (const query of idle) void this.client.invalidateQueries({ queryKey: query.queryKey, exact: true });
    if (idle.length > 0 && terminal) void this.client.invalidateQueries({ queryKey: queryKeys.jobLogs(jobId) });
    entry.timer = setTimeout(() => this.check(jobId), this.checkAfterMs * 2 ** entry.checks);
  }

  private forget(jobId: string): void {
    const entry = this.expected.get(jobId);
    if (entry) clearTimeout(entry.timer);
    this.expected.delete(jobId);
  }

  dispose(): void {
    for (const jobId of [...this.expected.keys()]) this.forget(jobId);
  }
}
