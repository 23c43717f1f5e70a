/**
 * What a job's summary says about "now", derived from one snapshot (pure): the attempt it is
 * on and where that attempt stands, and the error that is current. The job row keeps
 * `startedAt`, `workerId` and `lastError` from the attempt that set them, so shown as they are
 * they describe an earlier attempt while the next one waits, and a retried job that then
 * succeeded still shows its old error. The attempts say which attempt each fact belongs to.
 */
import type { JobAttempt, JobDetail } from '../../api/types';

/** Attempt statuses that end an attempt with an error (the scheduler's `job_attempts`). */
const ERROR_ENDS: ReadonlySet<string> = new Set(['failed', 'timed_out', 'lost', 'expired']);

export type AttemptNow =
  /** Nothing dispatched yet (pending, blocked by its parents, or due later the first time). */
  | { kind: 'none' }
  /** The next attempt waits for its time (a delay or a retry's backoff). */
  | { kind: 'due'; attempt: number; at: string | null }
  /** Dispatched, waiting for a worker to start it. */
  | { kind: 'waiting'; attempt: number; since: string | null }
  /** Started on a worker (running, or ended: `finishedAt`). */
  | { kind: 'started'; attempt: number; startedAt: string | null; finishedAt: string | null; workerId: string | null };

export interface CurrentError {
  attempt: number;
  errorClass: string | null;
  error: string;
  /** The job waits for its next attempt because of it (else it is failed or dead with it). */
  retrying: boolean;
}

function latest(job: JobDetail): JobAttempt | undefined {
  return job.attempts.reduce<JobAttempt | undefined>((last, a) => (!last || a.attempt > last.attempt ? a : last), undefined);
}

function endedWithError(attempt: JobAttempt | undefined): attempt is JobAttempt {
  return attempt !== undefined && ERROR_ENDS.has(attempt.status);
}

/** The attempt the job is on now and where it stands. */
export function attemptNow(job: JobDetail): AttemptNow {
  const last = latest(job);
  switch (job.status) {
    case 'pending':
    case 'blocked':
      return { kind: 'none' };
    case 'scheduled':
      // a retry's backoff (its last attempt ended) or a delayed job's first attempt
      return { kind: 'due', attempt: last ? last.attempt + 1 : Math.max(job.attempt, 1), at: job.runAt };
    case 'queued': {
      const row = last?.attempt === job.attempt ? last : undefined;
      return { kind: 'waiting', attempt: job.attempt, since: row?.dispatchedAt ?? job.queuedAt };
    }
    default: {
      // running, failed, or ended: the latest attempt's own times and worker
      if (!last) return { kind: 'none' };
      return {
        kind: 'started',
        attempt: last.attempt,
        startedAt: last.startedAt,
        finishedAt: job.status === 'running' ? null : last.finishedAt,
        workerId: last.workerId,
      };
    }
  }
}

/**
 * The error that is the job's state now, with the attempt that raised it: while the job is
 * failed or dead, or waits for a next attempt after a failed one. None once a later attempt
 * runs or the job succeeded or was cancelled (the attempts table keeps every error).
 */
export function currentError(job: JobDetail): CurrentError | null {
  const last = latest(job);
  if (job.status === 'failed' || job.status === 'dead') {
    const error = endedWithError(last) ? (last.error ?? job.lastError) : null;
    if (last && error) {
      return { attempt: last.attempt, errorClass: last.errorClass ?? job.lastErrorClass, error, retrying: false };
    }
    // ended before any attempt failed (e.g. a parent failed): the job's own error
    return job.lastError ? { attempt: job.attempt, errorClass: job.lastErrorClass, error: job.lastError, retrying: false } : null;
  }
  if (job.status !== 'scheduled' && job.status !== 'queued') return null;
  // waiting for the next attempt: the one before it failed (the next one's row may exist, queued)
  const before = last?.status === 'queued' ? job.attempts.find((a) => a.attempt === last.attempt - 1) : last;
  if (!endedWithError(before) || !before.error) return null;
  return { attempt: before.attempt, errorClass: before.errorClass, error: before.error, retrying: true };
}
