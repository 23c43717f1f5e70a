import { describe, expect, it } from 'vitest';
import type { JobAttempt, JobDetail, JobStatus } from '../../api/types';
import { jobDetail } from '../../test/jobs';
import { attemptNow, currentError } from './jobFacts';

const JOB = 'dddddddd-0000-4000-8000-000000000004';
const T1 = '2030-01-01T10:00:01Z';
const T2 = '2030-01-01T10:00:02Z';
const T3 = '2030-01-01T10:00:03Z';

function attempt(n: number, status: string, overrides: Partial<JobAttempt> = {}): JobAttempt {
  return {
    attempt: n,
    status,
    workerId: `worker-${n}`,
    dispatchedAt: T1,
    startedAt: status === 'queued' ? null : T1,
    finishedAt: null,
    durationMs: null,
    errorClass: null,
    error: null,
    ...overrides,
  };
}

const FAILED_FIRST = attempt(1, 'failed', { errorClass: 'SimulatedFailure', error: 'simulated failure', finishedAt: T2 });

/** A job whose first attempt failed, as the job row keeps it: attempt 1's start, worker, error. */
function afterFirstFailure(status: JobStatus, attempts: JobAttempt[], overrides: Partial<JobDetail> = {}): JobDetail {
  return jobDetail(JOB, status, {
    attempt: attempts.at(-1)?.attempt ?? 1,
    startedAt: T1,
    workerId: 'worker-1',
    lastError: 'simulated failure',
    lastErrorClass: 'SimulatedFailure',
    attempts,
    ...overrides,
  });
}

describe('the current error', () => {
  it('is none once a retried job succeeded, though the job row keeps the old error', () => {
    const job = afterFirstFailure('succeeded', [FAILED_FIRST, attempt(2, 'succeeded', { finishedAt: T3 })]);
    expect(currentError(job)).toBeNull();
  });

  it('is none while the next attempt runs', () => {
    expect(currentError(afterFirstFailure('running', [FAILED_FIRST, attempt(2, 'running')]))).toBeNull();
  });

  it('is the failed attempt’s, labelled as what the job retries after, while the next attempt waits', () => {
    const expected = { attempt: 1, errorClass: 'SimulatedFailure', error: 'simulated failure', retrying: true };
    expect(currentError(afterFirstFailure('scheduled', [FAILED_FIRST], { runAt: T3 }))).toEqual(expected);
    expect(currentError(afterFirstFailure('queued', [FAILED_FIRST, attempt(2, 'queued')]))).toEqual(expected);
  });

  it('is the last attempt’s while the job is failed or dead', () => {
    const second = attempt(2, 'timed_out', { errorClass: 'Timeout', error: 'ran past 60 s' });
    const job = afterFirstFailure('dead', [FAILED_FIRST, second]);
    expect(currentError(job)).toEqual({ attempt: 2, errorClass: 'Timeout', error: 'ran past 60 s', retrying: false });
    expect(currentError({ ...job, status: 'failed' })?.attempt).toBe(2);
  });

  it('is the job’s own for a job that died before any attempt (a parent failed)', () => {
    const job = jobDetail(JOB, 'dead', { attempt: 0, lastError: 'parent failed', lastErrorClass: null });
    expect(currentError(job)).toEqual({ attempt: 0, errorClass: null, error: 'parent failed', retrying: false });
  });

  it('is none for a first attempt waiting, or a cancelled job', () => {
    expect(currentError(jobDetail(JOB, 'queued', { attempts: [attempt(1, 'queued')] }))).toBeNull();
    expect(currentError(afterFirstFailure('cancelled', [FAILED_FIRST]))).toBeNull();
  });
});

describe('the attempt now', () => {
  it('is the next attempt, waiting since its dispatch, not the failed one’s start and worker', () => {
    const waiting = attempt(2, 'queued', { dispatchedAt: T3, workerId: null });
    const job = afterFirstFailure('queued', [FAILED_FIRST, waiting], { queuedAt: T3 });
    expect(attemptNow(job)).toEqual({ kind: 'waiting', attempt: 2, since: T3 });
  });

  it('is the next attempt, due after its backoff', () => {
    const job = afterFirstFailure('scheduled', [FAILED_FIRST], { attempt: 1, runAt: T3 });
    expect(attemptNow(job)).toEqual({ kind: 'due', attempt: 2, at: T3 });
  });

  it('is a delayed job’s first attempt, due', () => {
    expect(attemptNow(jobDetail(JOB, 'scheduled', { attempt: 0, runAt: T3 }))).toEqual({ kind: 'due', attempt: 1, at: T3 });
  });

  it('is the running attempt, with its own start and worker', () => {
    const running = attempt(2, 'running', { startedAt: T3, workerId: 'worker-b' });
    const job = afterFirstFailure('running', [FAILED_FIRST, running]);
    expect(attemptNow(job)).toEqual({ kind: 'started', attempt: 2, startedAt: T3, finishedAt: null, workerId: 'worker-b' });
  });

  it('is the last attempt of an ended job, and nothing before a dispatch', () => {
    const job = afterFirstFailure('succeeded', [FAILED_FIRST, attempt(2, 'succeeded', { startedAt: T2, finishedAt: T3 })]);
    expect(attemptNow(job)).toMatchObject({ kind: 'started', attempt: 2, startedAt: T2, finishedAt: T3 });
    expect(attemptNow(jobDetail(JOB, 'pending', { attempt: 0 }))).toEqual({ kind: 'none' });
  });
});
