/** One typed function per public API call (paths relative: same origin as the UI). */
import { api } from './instance';
import type {
  ApiKeyCreate,
  ApiKeyCreated,
  ApiKeyOut,
  ApiKeyPage,
  BatchAccepted,
  BatchCreate,
  BatchPage,
  BatchRetried,
  BatchStatusPublic,
  BatchView,
  BulkRequest,
  BulkResult,
  CancelOutcome,
  ChartRange,
  ChartSeries,
  DeadLetterActionPage,
  DeadLetterGroups,
  DeadLetterItem,
  DeadLetterPage,
  DeadLetterState,
  DemoAccounts,
  JobAccepted,
  JobAnalytics,
  JobCreate,
  JobDetail,
  JobSeries,
  JobSnapshot,
  JobTypeList,
  JobsPage,
  LiveFigures,
  LogPage,
  MemberCreate,
  MemberOut,
  MemberPage,
  OrganizationCreate,
  OrganizationOut,
  OrganizationPage,
  OrganizationUpdate,
  OrgRole,
  ProjectCreate,
  ProjectFlowChange,
  ProjectFlowView,
  ProjectOut,
  ProjectPage,
  ProjectUpdate,
  QueueCreate,
  QueueHistoryPage,
  QueueList,
  QueuePage,
  QueuePatch,
  QueueView,
  RegistrationAccepted,
  RequeueAccepted,
  RequeueBody,
  RetryAccepted,
  RetryPolicyFields,
  RetryPolicyList,
  ScheduleCreate,
  ScheduleDetail,
  ScheduleEdit,
  SchedulePage,
  ScheduleRun,
  ScheduleView,
  StoreHealth,
  TokenResponse,
  Usage,
  UserCreate,
  WorkerCommand,
  WorkerCommandAccepted,
  WorkerList,
} from './types';

const enc = encodeURIComponent;

// ---- auth ----

export function login(email: string, password: string): Promise<TokenResponse> {
  return api.request('/auth/login', { method: 'POST', body: { email, password }, auth: false });
}

/** 202 whether the email was new or taken (the API does not tell): log in afterwards. */
/** The demo logins of a development gateway (404 anywhere else). */
export function demoAccounts(signal?: AbortSignal): Promise<DemoAccounts> {
  return api.request('/auth/demo-accounts', { auth: false, signal });
}

export function register(body: UserCreate): Promise<RegistrationAccepted> {
  return api.request('/auth/register', { method: 'POST', body, auth: false });
}

// ---- jobs ----

export interface JobListParams {
  pageNumber?: number;
  /** A previous page's `nextCursor` (same filters and order): the page after it. */
  cursor?: string;
  pageSize?: number;
  sortBy?: 'createdAt' | 'updatedAt' | 'priority' | 'status' | 'type';
  sortDirection?: 'asc' | 'desc';
  status?: readonly string[];
  type?: string;
  priority?: number;
  createdFrom?: string;
  createdTo?: string;
  submittedBy?: string;
  scheduleId?: string;
  batchId?: string;
  /** A job id prefix (8+ hex digits) or `payload.<field> = <value>` (docs/api.md, "Searching jobs"). */
  search?: string;
}

export function listJobs(params: JobListParams, signal?: AbortSignal): Promise<JobsPage> {
  const { status, ...rest } = params;
  return api.request('/api/jobs', {
    query: { ...rest, status: status && status.length > 0 ? status.join(',') : undefined },
    signal,
  });
}

export function getJob(jobId: string, signal?: AbortSignal): Promise<JobDetail> {
  return api.request(`/api/jobs/${enc(jobId)}`, { signal });
}

/**
 * A job page's read: the job as one consistent snapshot, or whether it was accepted a moment
 * ago (the scheduler records it soon: ask again) or is not found (at once, no retry). Always a
 * 200, so an expected "not found" logs no error in the browser.
 */
export function getJobSnapshot(jobId: string, signal?: AbortSignal): Promise<JobSnapshot> {
  return api.request(`/api/jobs/${enc(jobId)}/snapshot`, { signal });
}

export function getJobLogs(
  jobId: string,
  afterId = 0,
  limit = 500,
  signal?: AbortSignal,
): Promise<LogPage> {
  return api.request(`/api/jobs/${enc(jobId)}/logs`, { query: { afterId, limit }, signal });
}

export function retryJob(jobId: string): Promise<RetryAccepted> {
  return api.request(`/api/jobs/${enc(jobId)}/retry`, { method: 'POST' });
}

export function cancelJob(jobId: string, reason?: string): Promise<CancelOutcome> {
  return api.request(`/api/jobs/${enc(jobId)}/cancel`, {
    method: 'POST',
    body: reason ? { reason } : undefined,
  });
}

export interface AnalyticsParams {
  createdFrom?: string;
  createdTo?: string;
}

export function getAnalytics(params: AnalyticsParams = {}, signal?: AbortSignal): Promise<JobAnalytics> {
  return api.request('/api/jobs/analytics', { query: { ...params }, signal });
}

/** POST /api/jobs with a fresh Idempotency-Key (one per submission attempt). */
export function submitJob(body: JobCreate, idempotencyKey: string): Promise<JobAccepted> {
  return api.request('/api/jobs', {
    method: 'POST',
    body,
    headers: { 'Idempotency-Key': idempotencyKey },
  });
}

/** Every job type a submission may name, with its payload schema and live workers. */
export function listJobTypes(signal?: AbortSignal): Promise<JobTypeList> {
  return api.request('/api/job-types', { signal });
}

// ---- batches ----

export function submitBatch(body: BatchCreate, idempotencyKey: string): Promise<BatchAccepted> {
  return api.request('/api/batches', {
    method: 'POST',
    body,
    headers: { 'Idempotency-Key': idempotencyKey },
  });
}

export function getBatchStatus(batchId: string, signal?: AbortSignal): Promise<BatchStatusPublic> {
  return api.request(`/api/batches/${enc(batchId)}/status`, { signal });
}

/** `batchId`: 8 or more hex digits of an id, or a whole id (shorter: a 422 on `batchId`). */
export function listBatches(
  pageNumber: number,
  pageSize: number,
  signal?: AbortSignal,
  batchId?: string,
): Promise<BatchPage> {
  return api.request('/api/batches', { query: { pageNumber, pageSize, batchId }, signal });
}

/** Retry every dead member of a batch (a member of its project or above); 409 when none is dead. */
export function retryFailedBatch(batchId: string): Promise<BatchRetried> {
  return api.request(`/api/batches/${enc(batchId)}/retry-failed`, { method: 'POST' });
}

export function getBatch(batchId: string, signal?: AbortSignal): Promise<BatchView> {
  return api.request(`/api/batches/${enc(batchId)}`, { signal });
}

// ---- dead letters ----

export interface DeadLetterParams {
  status?: DeadLetterState;
  reason?: string;
  jobType?: string;
  fingerprint?: string;
  createdFrom?: string;
  createdTo?: string;
  pageNumber?: number;
  pageSize?: number;
}

export function listDeadLetters(params: DeadLetterParams, signal?: AbortSignal): Promise<DeadLetterPage> {
  return api.request('/api/dead-letters', { query: { ...params }, signal });
}

export function deadLetterGroups(
  params: Omit<DeadLetterParams, 'pageNumber' | 'pageSize'>,
  signal?: AbortSignal,
): Promise<DeadLetterGroups> {
  return api.request('/api/dead-letters/groups', { query: { ...params }, signal });
}

export function deadLetterActions(
  params: { pageNumber?: number; pageSize?: number; deadLetterId?: string; jobId?: string },
  signal?: AbortSignal,
): Promise<DeadLetterActionPage> {
  return api.request('/api/dead-letters/actions', { query: { ...params }, signal });
}

export function requeueDeadLetter(id: string, body: RequeueBody): Promise<RequeueAccepted> {
  return api.request(`/api/dead-letters/${enc(id)}/requeue`, { method: 'POST', body });
}

export function discardDeadLetter(id: string, reason?: string): Promise<DeadLetterItem> {
  return api.request(`/api/dead-letters/${enc(id)}/discard`, {
    method: 'POST',
    body: reason ? { reason } : undefined,
  });
}

export function bulkDeadLetters(body: BulkRequest): Promise<BulkResult> {
  return api.request('/api/dead-letters/bulk', { method: 'POST', body });
}

// ---- schedules ----

export function listSchedules(
  params: { pageNumber?: number; pageSize?: number },
  signal?: AbortSignal,
): Promise<SchedulePage> {
  return api.request('/api/schedules', { query: { ...params }, signal });
}

export function getSchedule(id: string, signal?: AbortSignal): Promise<ScheduleDetail> {
  return api.request(`/api/schedules/${enc(id)}`, { signal });
}

export function createSchedule(body: ScheduleCreate): Promise<ScheduleView> {
  return api.request('/api/schedules', { method: 'POST', body });
}

/** Replace cron, time zone and job template (409 for a schedule declared in code). */
export function editSchedule(id: string, body: ScheduleEdit): Promise<ScheduleView> {
  return api.request(`/api/schedules/${enc(id)}`, { method: 'PUT', body });
}

/** One job from the template now, as a fire; the same `idempotencyKey` runs it once. */
export function runSchedule(id: string, idempotencyKey: string): Promise<ScheduleRun> {
  return api.request(`/api/schedules/${enc(id)}/run`, {
    method: 'POST',
    headers: { 'Idempotency-Key': idempotencyKey },
  });
}

export function pauseSchedule(id: string): Promise<ScheduleView> {
  return api.request(`/api/schedules/${enc(id)}/pause`, { method: 'POST' });
}

export function resumeSchedule(id: string): Promise<ScheduleView> {
  return api.request(`/api/schedules/${enc(id)}/resume`, { method: 'POST' });
}

export function deleteSchedule(id: string): Promise<undefined> {
  return api.request(`/api/schedules/${enc(id)}`, { method: 'DELETE' });
}

// ---- registry ----

export function listRetryPolicies(signal?: AbortSignal): Promise<RetryPolicyList> {
  return api.request('/api/retry-policies', { signal });
}

export function defaultRetryPolicy(signal?: AbortSignal): Promise<RetryPolicyFields> {
  return api.request('/api/retry-policies/defaults', { signal });
}

export function listWorkers(includeDeadForMinutes = 60, signal?: AbortSignal): Promise<WorkerList> {
  return api.request('/api/workers', { query: { includeDeadForMinutes }, signal });
}

/** An admin's quiet (take no new job) or stop (after its current jobs), sent to the worker. */
export function commandWorker(workerId: string, command: WorkerCommand): Promise<WorkerCommandAccepted> {
  return api.request(`/api/workers/${enc(workerId)}/${command}`, { method: 'POST' });
}

/** The job store's vacuum health (admins): autovacuum, dead rows per table, the verdict. */
export function getStoreHealth(signal?: AbortSignal): Promise<StoreHealth> {
  return api.request('/api/store/health', { signal });
}

export function listQueues(signal?: AbortSignal): Promise<QueueList> {
  return api.request('/api/queue-depths', { signal });
}

// ---- a project's queues (docs/dashboard.md): the request's project via X-Project ----

export interface QueueListParams {
  name?: string;
  pageNumber?: number;
  pageSize?: number;
}

/** Queues of the project chosen (all projects: every one the caller sees), by project and name. */
export function listProjectQueues(params: QueueListParams, signal?: AbortSignal): Promise<QueuePage> {
  return api.request('/api/queues', { query: { ...params }, signal });
}

export interface QueueHistoryParams extends QueueListParams {
  /** Points per queue, one a minute, ending with the current minute (default 60, at most 1440). */
  minutes?: number;
}

/** The last minutes of the queues a listing page shows: jobs waiting and running per minute. */
export function getQueueHistory(params: QueueHistoryParams, signal?: AbortSignal): Promise<QueueHistoryPage> {
  return api.request('/api/queues/history', { query: { ...params }, signal });
}

export function getQueue(queueId: string, signal?: AbortSignal): Promise<QueueView> {
  return api.request(`/api/queues/${enc(queueId)}`, { signal });
}

/** Create a queue in the project chosen (its admins): a name taken answers 409, bad limits 422. */
export function createQueue(body: QueueCreate): Promise<QueueView> {
  return api.request('/api/queues', { method: 'POST', body });
}

/** Change limits and defaults (admins): a field left out stays, one sent as null is cleared. */
export function updateQueue(queueId: string, body: QueuePatch): Promise<QueueView> {
  return api.request(`/api/queues/${enc(queueId)}`, { method: 'PATCH', body });
}

/** Dispatch nothing more from the queue (admins; idempotent): running jobs finish. */
export function pauseQueue(queueId: string): Promise<QueueView> {
  return api.request(`/api/queues/${enc(queueId)}/pause`, { method: 'POST' });
}

export function resumeQueue(queueId: string): Promise<QueueView> {
  return api.request(`/api/queues/${enc(queueId)}/resume`, { method: 'POST' });
}

/** Delete a queue (admins): 409 while it has unfinished jobs. */
export function deleteQueue(queueId: string): Promise<undefined> {
  return api.request(`/api/queues/${enc(queueId)}`, { method: 'DELETE' });
}

// ---- a project's weight and quotas (docs/flow-control.md, "Project weights", "Quotas") ----

/** The project's weight in fair dispatch and its quotas (its viewers); 404 for a project not seen. */
export function getProjectFlow(projectId: string, signal?: AbortSignal): Promise<ProjectFlowView> {
  return api.request(`/api/project-flow/${enc(projectId)}`, { signal });
}

/** Change the fields given (its admins): a quota sent as null is cleared; bad values answer 422. */
export function setProjectFlow(projectId: string, body: ProjectFlowChange): Promise<ProjectFlowView> {
  return api.request(`/api/project-flow/${enc(projectId)}`, { method: 'PUT', body });
}

// ---- a project's usage per UTC day (docs/flow-control.md, "Usage") ----

export interface UsageParams {
  /** One project (none: every project the caller sees). */
  projectId?: string;
  /** First and last UTC day, `YYYY-MM-DD` (default: the last 30 days; at most 366). */
  from?: string;
  to?: string;
}

/** Jobs submitted, attempts, run seconds, succeeded and dead per day with activity, and the range's totals. */
export function getUsage(params: UsageParams, signal?: AbortSignal): Promise<Usage> {
  return api.request('/api/usage', { query: { ...params }, signal });
}

/** The charts of a range, of every visible queue or of one (`queueId`). */
export function getCharts(range: ChartRange, queueId?: string, signal?: AbortSignal): Promise<ChartSeries> {
  return api.request('/api/jobs/analytics/charts', { query: { range, queueId }, signal });
}

/** Unfinished jobs by status now, and for admins the workers' busy and total slots. */
export function getLiveFigures(signal?: AbortSignal): Promise<LiveFigures> {
  return api.request('/api/jobs/analytics/now', { signal });
}

export function getJobSeries(bucketMinutes: number, buckets: number, signal?: AbortSignal): Promise<JobSeries> {
  return api.request('/api/jobs/analytics/series', { query: { bucketMinutes, buckets }, signal });
}

export function getDeadLetter(deadLetterId: string, signal?: AbortSignal): Promise<DeadLetterItem> {
  return api.request(`/api/dead-letters/${enc(deadLetterId)}`, { signal });
}

// ---- organizations, members, projects (docs/tenancy.md) ----

export interface PageParams {
  pageNumber?: number;
  pageSize?: number;
}

/** Your organizations (a platform admin: all), by name. */
export function listOrganizations(params: PageParams, signal?: AbortSignal): Promise<OrganizationPage> {
  return api.request('/api/organizations', { query: { ...params }, signal });
}

/** Anyone may create one and becomes its owner; a taken slug answers 409. */
export function createOrganization(body: OrganizationCreate): Promise<OrganizationOut> {
  return api.request('/api/organizations', { method: 'POST', body });
}

export function getOrganization(orgId: string, signal?: AbortSignal): Promise<OrganizationOut> {
  return api.request(`/api/organizations/${enc(orgId)}`, { signal });
}

/** Rename or change the slug (owner). */
export function updateOrganization(orgId: string, body: OrganizationUpdate): Promise<OrganizationOut> {
  return api.request(`/api/organizations/${enc(orgId)}`, { method: 'PATCH', body });
}

export function listMembers(orgId: string, params: PageParams, signal?: AbortSignal): Promise<MemberPage> {
  return api.request(`/api/organizations/${enc(orgId)}/members`, { query: { ...params }, signal });
}

/** Add a registered user by email (owner): an unknown email 404, a member already 409. */
export function addMember(orgId: string, body: MemberCreate): Promise<MemberOut> {
  return api.request(`/api/organizations/${enc(orgId)}/members`, { method: 'POST', body });
}

/** Change a member's role (owner); demoting the last owner answers 409. */
export function changeMemberRole(orgId: string, userId: string, role: OrgRole): Promise<MemberOut> {
  return api.request(`/api/organizations/${enc(orgId)}/members/${enc(userId)}`, {
    method: 'PATCH',
    body: { role },
  });
}

/** Remove a member (owner), or leave (your own user id); the last owner answers 409. */
export function removeMember(orgId: string, userId: string): Promise<undefined> {
  return api.request(`/api/organizations/${enc(orgId)}/members/${enc(userId)}`, { method: 'DELETE' });
}

export function listProjects(
  params: PageParams & { orgId?: string },
  signal?: AbortSignal,
): Promise<ProjectPage> {
  return api.request('/api/projects', { query: { ...params }, signal });
}

/** Create a project in an organization (admin). */
export function createProject(body: ProjectCreate): Promise<ProjectOut> {
  return api.request('/api/projects', { method: 'POST', body });
}

export function getProject(projectId: string, signal?: AbortSignal): Promise<ProjectOut> {
  return api.request(`/api/projects/${enc(projectId)}`, { signal });
}

/** Rename or change the slug (admin). */
export function updateProject(projectId: string, body: ProjectUpdate): Promise<ProjectOut> {
  return api.request(`/api/projects/${enc(projectId)}`, { method: 'PATCH', body });
}

/** Delete a project (admin); a personal organization's default project answers 409. */
export function deleteProject(projectId: string): Promise<undefined> {
  return api.request(`/api/projects/${enc(projectId)}`, { method: 'DELETE' });
}

// ---- API keys (docs/tenancy.md) ----

/** A project's keys, newest first (admin): never the key itself. */
export function listApiKeys(projectId: string, params: PageParams, signal?: AbortSignal): Promise<ApiKeyPage> {
  return api.request(`/api/projects/${enc(projectId)}/api-keys`, { query: { ...params }, signal });
}

/** Create a key (admin): the answer's `key` is the only time the key is shown. */
export function createApiKey(projectId: string, body: ApiKeyCreate): Promise<ApiKeyCreated> {
  return api.request(`/api/projects/${enc(projectId)}/api-keys`, { method: 'POST', body });
}

/** Revoke a key (admin): refused from the next request on; the row stays. */
export function revokeApiKey(projectId: string, keyId: string): Promise<undefined> {
  return api.request(`/api/projects/${enc(projectId)}/api-keys/${enc(keyId)}`, { method: 'DELETE' });
}

/** The key a program calls with (`X-API-Key`): its project and role; 401 for any unusable key. */
export function getCallingApiKey(key: string, signal?: AbortSignal): Promise<ApiKeyOut> {
  return api.request('/api/api-key', { headers: { 'X-API-Key': key }, auth: false, signal });
}
