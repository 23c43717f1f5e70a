import type { JobDetail } from '../../api/types';
import { TERMINAL_STATUSES } from '../../api/types';
import { formatDateTime, formatDuration, priorityLabel, shortId } from '../../lib/format';
import { Link } from '../../project/links';
import { ProjectName } from '../../project/ProjectName';
import { attemptNow, currentError, type AttemptNow } from './jobFacts';

function policyText(job: JobDetail): string {
  const p = job.retryPolicy;
  if (!p) return 'type default';
  const parts = [p.strategy ?? 'default'];
  if (p.baseDelayMs !== null && p.baseDelayMs !== undefined) parts.push(`base ${formatDuration(p.baseDelayMs)}`);
  if (p.multiplier !== null && p.multiplier !== undefined) parts.push(`×${p.multiplier}`);
  if (p.maxDelayMs !== null && p.maxDelayMs !== undefined) parts.push(`max ${formatDuration(p.maxDelayMs)}`);
  if (p.jitter !== null && p.jitter !== undefined) parts.push(p.jitter ? 'jitter' : 'no jitter');
  return parts.join(', ');
}

/** Where the current attempt stands: its start and worker, never an earlier attempt's. */
function AttemptNowRows({ now }: { now: AttemptNow }) {
  switch (now.kind) {
    case 'none':
      return (
        <>
          <dt>Started</dt>
          <dd data-testid="job-attempt-now">not dispatched yet</dd>
        </>
      );
    case 'due':
      return (
        <>
          <dt>Due</dt>
          <dd data-testid="job-attempt-now" data-attempt={now.attempt}>
            attempt {now.attempt} due {formatDateTime(now.at)}
          </dd>
        </>
      );
    case 'waiting':
      return (
        <>
          <dt>Waiting</dt>
          <dd data-testid="job-attempt-now" data-attempt={now.attempt}>
            attempt {now.attempt} waiting since {formatDateTime(now.since)}
          </dd>
        </>
      );
    case 'started':
      return (
        <>
          <dt>Started</dt>
          <dd data-testid="job-attempt-now" data-attempt={now.attempt}>
            {formatDateTime(now.startedAt)} (attempt {now.attempt})
          </dd>
          {now.workerId ? (
            <>
              <dt>Worker</dt>
              <dd className="mono">{now.workerId}</dd>
            </>
          ) : null}
        </>
      );
  }
}

/** The job's facts, each about the attempt it belongs to, all from one snapshot. */
export function JobSummaryCard({ job }: { job: JobDetail }) {
  const terminal = TERMINAL_STATUSES.includes(job.status);
  const error = currentError(job);
  return (
    <section className="card" aria-labelledby="summary-heading">
      <h2 id="summary-heading">Summary</h2>
      <dl className="props">
        <dt>Id</dt>
        <dd className="mono">{job.jobId}</dd>
        <dt>Type</dt>
        <dd>{job.type}</dd>
        <dt>Priority</dt>
        <dd>
          {priorityLabel(job.priority)} ({job.priority})
        </dd>
        <dt>Attempt</dt>
        <dd>
          {job.attempt} of {job.maxAttempts}
        </dd>
        <dt>Project</dt>
        <dd data-testid="job-project">
          <ProjectName projectId={job.projectId} />
        </dd>
        <dt>Submitted by</dt>
        <dd>{job.submittedBy}</dd>
        <dt>Created</dt>
        <dd>{formatDateTime(job.createdAt)}</dd>
        <AttemptNowRows now={attemptNow(job)} />
        {terminal ? (
          <>
            <dt>Finished</dt>
            <dd>{formatDateTime(job.finishedAt)}</dd>
          </>
        ) : null}
        {error ? (
          <>
            <dt>{error.retrying ? 'Retrying after' : 'Error'}</dt>
            <dd
              className={error.retrying ? undefined : 'danger-text'}
              data-testid="job-current-error"
              data-attempt={error.attempt}
            >
              {error.retrying ? `attempt ${error.attempt} failed` : `attempt ${error.attempt}`}:{' '}
              {error.errorClass ? `${error.errorClass}: ` : ''}
              {error.error}
            </dd>
          </>
        ) : null}
        <dt>Timeout</dt>
        <dd>{job.timeoutSeconds} s</dd>
        <dt>Retry policy</dt>
        <dd>{policyText(job)}</dd>
        {job.batchId ? (
          <>
            <dt>Batch</dt>
            <dd>
              <Link to={`/jobs?batchId=${job.batchId}`} className="mono">
                {shortId(job.batchId)}
              </Link>
            </dd>
          </>
        ) : null}
        {job.scheduleId ? (
          <>
            <dt>Schedule</dt>
            <dd>
              <Link to={`/jobs?scheduleId=${job.scheduleId}`} className="mono">
                {shortId(job.scheduleId)}
              </Link>
            </dd>
          </>
        ) : null}
        {job.traceId ? (
          <>
            <dt>Trace id</dt>
            <dd className="mono">{job.traceId}</dd>
          </>
        ) : null}
      </dl>
    </section>
  );
}
