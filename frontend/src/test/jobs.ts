import type { JobDetail, JobStatus, JobSummary, JobsPage } from '../api/types';

/** A job as the jobs list shows it: an email job on its first of 3 attempts, unless `overrides` say. */
export function jobSummary(jobId: string, status: JobStatus, overrides: Partial<JobSummary> = {}): JobSummary {
  return {
    jobId,
    type: 'email',
    priority: 3,
    status,
    attempt: 1,
    maxAttempts: 3,
    submittedBy: 'user@test.com',
    projectId: '00000000-0000-4000-8000-000000000001',
    createdAt: '2030-01-01T10:00:00Z',
    updatedAt: '2030-01-01T10:00:01Z',
    startedAt: null,
    finishedAt: null,
    lastError: null,
    scheduleId: null,
    batchId: null,
    runAt: null,
    dependsOn: [],
    cancelRequestedAt: null,
    retryPolicy: null,
    ...overrides,
  };
}

/** A page of the jobs list holding `items` (page 1 of 1 unless `paging` says). */
export function jobsPage(items: JobSummary[], paging: Partial<Omit<JobsPage, 'items'>> = {}): JobsPage {
  return { items, pageNumber: 1, pageSize: 20, totalItems: items.length, totalPages: 1, totalCapped: false, ...paging };
}

/** A job as its page shows it: `jobSummary`'s fields, with its attempts and timeline empty. */
export function jobDetail(jobId: string, status: JobStatus, overrides: Partial<JobDetail> = {}): JobDetail {
  return {
    ...jobSummary(jobId, status),
    lastErrorClass: null,
    cancelRequestedBy: null,
    payload: {},
    result: null,
    timeoutSeconds: 60,
    leaseExpiresAt: null,
    queuedAt: null,
    deadlineAt: null,
    lostCount: 0,
    workerId: null,
    traceId: null,
    parents: [],
    children: [],
    childrenTotal: 0,
    deadLetter: null,
    attempts: [],
    timeline: [],
    ...overrides,
  };
}
