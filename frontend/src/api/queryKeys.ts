/** TanStack Query keys, grouped so live events can invalidate by prefix. */
import type { DeadLetterParams, JobListParams, QueueHistoryParams, QueueListParams } from './endpoints';

export const queryKeys = {
  jobs: ['jobs'] as const,
  jobLists: ['jobs', 'list'] as const,
  jobList: (params: JobListParams) => ['jobs', 'list', params] as const,
  jobDetails: ['jobs', 'detail'] as const,
  jobDetail: (jobId: string) => ['jobs', 'detail', jobId] as const,
  /** A job page's whole snapshot (header, timeline, attempts, result together). */
  jobSnapshots: ['jobs', 'snapshot'] as const,
  jobSnapshot: (jobId: string) => ['jobs', 'snapshot', jobId] as const,
  jobLogs: (jobId: string) => ['jobs', 'logs', jobId] as const,
  analytics: ['analytics'] as const,
  analyticsTotals: ['analytics', 'totals'] as const,
  analyticsSeries: (bucketMinutes: number, buckets: number) =>
    ['analytics', 'series', bucketMinutes, buckets] as const,
  /** A range's charts (under `analytics`: live job changes refresh them, throttled). */
  charts: (range: string, queueId: string | null) => ['analytics', 'charts', range, queueId] as const,
  /** The overview's figures of now (polled every second, so no live invalidation). */
  liveFigures: ['live-figures'] as const,
  /** Every queue query: the platform's queue depths and a project's queues (running, waiting). */
  queues: ['queues'] as const,
  queueDepths: ['queues', 'depths'] as const,
  queueLists: ['queues', 'list'] as const,
  queueList: (params: QueueListParams) => ['queues', 'list', params] as const,
  /** One queue (its page: figures now and its charts). */
  queueDetail: (queueId: string) => ['queues', 'detail', queueId] as const,
  /** A page of queues' last hour, per minute (sampled once a minute, no live event: polled). */
  queueHistory: (params: QueueHistoryParams) => ['queue-history', params] as const,
  /** A project's weight in fair dispatch and its quotas (changed by its admins, no live event). */
  projectFlow: (projectId: string) => ['project-flow', projectId] as const,
  /** A project's usage per UTC day from `from` to `to` (folded every 2 s, no live event: polled). */
  usage: (projectId: string, from: string, to: string) => ['usage', projectId, from, to] as const,
  deadLetters: ['dead-letters'] as const,
  deadLetterList: (params: DeadLetterParams) => ['dead-letters', 'list', params] as const,
  deadLetterGroups: (params: DeadLetterParams) => ['dead-letters', 'groups', params] as const,
  deadLetterActions: (page: number) => ['dead-letters', 'actions', page] as const,
  deadLetterOpenCount: ['dead-letters', 'open-count'] as const,
  schedules: ['schedules'] as const,
  scheduleList: (page: number) => ['schedules', 'list', page] as const,
  scheduleDetail: (id: string) => ['schedules', 'detail', id] as const,
  workers: ['workers'] as const,
  /** The job store's vacuum health (catalog statistics, no live event: polled). */
  storeHealth: ['store-health'] as const,
  batches: ['batches'] as const,
  batchList: (page: number, batchId = '') => ['batches', 'list', page, batchId] as const,
  batchView: (id: string) => ['batches', id, 'view'] as const,
  batchStatus: (id: string) => ['batches', id, 'status'] as const,
  retryPolicies: ['retry-policies'] as const,
  jobTypes: ['job-types'] as const,
  organizations: ['organizations'] as const,
  organizationList: (page: number) => ['organizations', 'list', page] as const,
  /** Every organization of the user (the project switcher's groups and roles). */
  organizationDirectory: ['organizations', 'directory'] as const,
  organization: (orgId: string) => ['organizations', 'detail', orgId] as const,
  members: (orgId: string) => ['organizations', 'members', orgId] as const,
  memberList: (orgId: string, page: number) => ['organizations', 'members', orgId, page] as const,
  projects: ['projects'] as const,
  projectList: (orgId: string, page: number) => ['projects', 'list', orgId, page] as const,
  /** Every project the user sees (the project switcher). */
  projectDirectory: ['projects', 'directory'] as const,
  project: (projectId: string) => ['projects', 'detail', projectId] as const,
  apiKeys: (projectId: string) => ['api-keys', projectId] as const,
  apiKeyList: (projectId: string, page: number) => ['api-keys', projectId, page] as const,
};
