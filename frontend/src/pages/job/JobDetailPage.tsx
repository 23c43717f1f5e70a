import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { errorMessage, isApiError } from '../../api/client';
import { cancelJob, getJob, retryJob } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { TERMINAL_STATUSES, type JobDetail } from '../../api/types';
import { Denied } from '../../components/Denied';
import { ProgressBar } from '../../components/ProgressBar';
import { ConfirmAction } from '../../components/ConfirmAction';
import { DependencyGraph, type GraphNode } from '../../components/DependencyGraph';
import { JsonBlock } from '../../components/JsonBlock';
import { ListTable, type Column } from '../../components/ListTable';
import { JobLink } from '../../components/JobLink';
import { StatusBadge } from '../../components/StatusBadge';
import { Empty, ErrorState, Loading } from '../../components/states';
import { formatDateTime, formatDuration, priorityLabel, shortId } from '../../lib/format';
import { notify } from '../../lib/notices';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { deniedReason, useRights } from '../../project/access';
import { Link } from '../../project/links';
import { ProjectName } from '../../project/ProjectName';
import { useScopedQuery } from '../../project/useScopedQuery';
import { LogTail } from './LogTail';
import { TableRegion } from '../../components/TableRegion';

const ATTEMPT_COLUMNS: readonly Column[] = [
  { label: '#', className: 'num' },
  { label: 'Status' },
  { label: 'Worker' },
  { label: 'Dispatched' },
  { label: 'Started' },
  { label: 'Duration', className: 'num' },
  { label: 'Error' },
];

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

/**
 * The running attempt's progress as its handler last reported it (`ctx.progress`). The API
 * sends it only while the job runs and only the current attempt's; the live cache patch drops
 * it when a change moves the job on (live/cache.ts), so an older attempt's is never shown.
 */
function JobProgress({ job }: { job: JobDetail }) {
  const progress = job.progress;
  if (job.status !== 'running' || !progress) return null;
  const percent = Math.min(100, Math.max(0, progress.percent));
  // floor: a job at 99.6 % is not done
  const detail = `${Math.floor(percent)} %${progress.message ? ` — ${progress.message}` : ''}`;
  return (
    <div className="card" data-testid="job-progress">
      <ProgressBar label="Progress" value={percent} max={100} detail={detail} />
    </div>
  );
}

function Dependencies({ job }: { job: JobDetail }) {
  const children: GraphNode[] = job.children.map((child) => ({ jobId: child.jobId, status: child.status }));
  const parents: GraphNode[] = job.parents.map((parent) => ({ jobId: parent.jobId, status: parent.status }));
  if (parents.length === 0 && children.length === 0) {
    return <p className="muted">No parents and no children.</p>;
  }
  return (
    <>
      <div className="graph">
        <DependencyGraph job={{ jobId: job.jobId, status: job.status }} parents={parents} children={children} />
      </div>
      <div className="grid grid-2">
        <div>
          <h3>Parents (must succeed first)</h3>
          {parents.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <ul data-testid="job-parents">
              {parents.map((parent) => (
                <li key={parent.jobId}>
                  <JobLink jobId={parent.jobId} />{' '}
                  <StatusBadge status={parent.status ?? 'pending'} label={parent.status ?? 'not recorded yet'} />
                </li>
              ))}
            </ul>
          )}
        </div>
        <div>
          <h3>Children (wait for this one)</h3>
          {children.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <ul data-testid="job-children">
              {children.map((child) => (
                <li key={child.jobId}>
                  <JobLink jobId={child.jobId} />{' '}
                  <StatusBadge status={child.status ?? 'pending'} />
                </li>
              ))}
            </ul>
          )}
          {job.childrenTotal > children.length ? (
            <p className="muted">
              {children.length} of {job.childrenTotal} shown (the oldest).
            </p>
          ) : null}
        </div>
      </div>
    </>
  );
}

export function JobDetailPage() {
  const { jobId = '' } = useParams();
  usePageTitle(`Job ${shortId(jobId)}`);
  const client = useQueryClient();
  const poll = usePollWhileOffline(3_000);
  const job = useScopedQuery({
    queryKey: queryKeys.jobDetail(jobId),
    queryFn: ({ signal }) => getJob(jobId, signal),
    // just submitted: the scheduler records it a moment later
    retry: (count, error) => (isApiError(error) && error.status === 404 ? count < 5 : count < 2),
    retryDelay: 1_000,
    // a running job's progress comes with its worker's heartbeats (every 2 s) and no live
    // event carries it: read the job every 3 s while it runs, also while the socket is live
    refetchInterval: (query) => {
      const status = query.state.data?.status;
      if (status && TERMINAL_STATUSES.includes(status)) return false;
      return status === 'running' ? 3_000 : poll;
    },
  });

  const refresh = () => {
    void client.invalidateQueries({ queryKey: queryKeys.jobDetail(jobId) });
    void client.invalidateQueries({ queryKey: queryKeys.jobLists });
  };

  const cancel = useMutation({
    mutationFn: () => cancelJob(jobId),
    onSuccess: (outcome) => {
      notify(
        outcome.status === 'cancelled'
          ? 'Job cancelled'
          : 'Cancel requested: the worker is stopping the job',
      );
      refresh();
    },
    onError: (error) => notify(`Cancel failed: ${errorMessage(error)}`, 'error'),
  });
  const retry = useMutation({
    mutationFn: () => retryJob(jobId),
    onSuccess: () => {
      notify('Retry requested');
      refresh();
    },
    onError: (error) => notify(`Retry failed: ${errorMessage(error)}`, 'error'),
  });
  // the job's project decides (also with all projects chosen): a viewer may only look
  const rights = useRights(job.data?.projectId ?? null);

  if (job.isPending) return <Loading label="Loading the job…" />;
  if (job.isError) {
    return (
      <>
        <h1>Job {shortId(jobId)}</h1>
        {isApiError(job.error) && job.error.status === 404 ? (
          <Empty>
            No job <code>{jobId}</code> is visible to you (yet). <Link to="/jobs">Back to the jobs</Link>
          </Empty>
        ) : (
          <ErrorState error={job.error} onRetry={() => void job.refetch()} />
        )}
      </>
    );
  }

  const data = job.data;
  const terminal = TERMINAL_STATUSES.includes(data.status);
  const cancelPending = data.cancelRequestedAt !== null && !terminal;
  const actionable = data.status === 'dead' || !terminal;

  return (
    <>
      <p>
        <Link to="/jobs">← Jobs</Link>
      </p>
      <div className="page-header">
        <h1>
          Job <span className="mono">{shortId(data.jobId)}</span>{' '}
          <span data-testid="job-status" data-status={data.status}>
            <StatusBadge status={data.status} />
          </span>
        </h1>
        {rights.act ? (
          <div className="toolbar" aria-label="Job actions" role="group">
            {data.status === 'dead' ? (
              <button type="button" className="primary" onClick={() => retry.mutate()} disabled={retry.isPending}>
                {retry.isPending ? 'Retrying…' : 'Retry job'}
              </button>
            ) : null}
            {!terminal ? (
              <ConfirmAction
                label={cancelPending ? 'Cancel again' : 'Cancel job'}
                confirmLabel="Yes, cancel job"
                question="Stop this job?"
                onConfirm={() => cancel.mutate()}
                busy={cancel.isPending}
                testId="cancel-job"
              />
            ) : null}
          </div>
        ) : null}
      </div>
      {!rights.act && actionable ? (
        <Denied testId="job-actions-denied">{deniedReason(rights, 'act', 'retrying or cancelling its jobs')}</Denied>
      ) : null}
      {cancelPending ? (
        <p role="status" className="muted">
          Cancel requested {formatDateTime(data.cancelRequestedAt)}
          {data.cancelRequestedBy ? ` by ${data.cancelRequestedBy}` : ''}; waiting for the worker to stop.
        </p>
      ) : null}
      {data.status === 'queued' && data.waitingReason ? (
        <p role="status" className="card card-warn" data-testid="job-waiting">
          <strong>Waiting for a worker:</strong> {data.waitingReason}. The job stays queued and starts as soon as a worker
          that serves <span className="mono">{data.type}</span> is live (workers load handler modules with{' '}
          <code>WORKER_HANDLER_MODULES</code>; docs/sdk.md).
        </p>
      ) : null}
      {data.deadLetter ? (
        <div className="card" role="note">
          <strong>Dead letter:</strong> {data.deadLetter.reason}
          {data.deadLetter.lastError ? ` — ${data.deadLetter.lastError}` : ''}.{' '}
          <Link to={`/dead-letters?letter=${data.deadLetter.id}`}>Inspect or requeue it</Link>
        </div>
      ) : null}

      <JobProgress job={data} />

      <div className="grid grid-2">
        <section className="card" aria-labelledby="summary-heading">
          <h2 id="summary-heading">Summary</h2>
          <dl className="props">
            <dt>Id</dt>
            <dd className="mono">{data.jobId}</dd>
            <dt>Type</dt>
            <dd>{data.type}</dd>
            <dt>Priority</dt>
            <dd>
              {priorityLabel(data.priority)} ({data.priority})
            </dd>
            <dt>Attempt</dt>
            <dd>
              {data.attempt} of {data.maxAttempts}
            </dd>
            <dt>Project</dt>
            <dd data-testid="job-project">
              <ProjectName projectId={data.projectId} />
            </dd>
            <dt>Submitted by</dt>
            <dd>{data.submittedBy}</dd>
            <dt>Created</dt>
            <dd>{formatDateTime(data.createdAt)}</dd>
            {data.runAt ? (
              <>
                <dt>Due</dt>
                <dd>{formatDateTime(data.runAt)}</dd>
              </>
            ) : null}
            <dt>Started</dt>
            <dd>{formatDateTime(data.startedAt)}</dd>
            <dt>Finished</dt>
            <dd>{formatDateTime(data.finishedAt)}</dd>
            <dt>Timeout</dt>
            <dd>{data.timeoutSeconds} s</dd>
            <dt>Retry policy</dt>
            <dd>{policyText(data)}</dd>
            {data.workerId ? (
              <>
                <dt>Worker</dt>
                <dd className="mono">{data.workerId}</dd>
              </>
            ) : null}
            {data.batchId ? (
              <>
                <dt>Batch</dt>
                <dd>
                  <Link to={`/jobs?batchId=${data.batchId}`} className="mono">
                    {shortId(data.batchId)}
                  </Link>
                </dd>
              </>
            ) : null}
            {data.scheduleId ? (
              <>
                <dt>Schedule</dt>
                <dd>
                  <Link to={`/jobs?scheduleId=${data.scheduleId}`} className="mono">
                    {shortId(data.scheduleId)}
                  </Link>
                </dd>
              </>
            ) : null}
            {data.lastError ? (
              <>
                <dt>Last error</dt>
                <dd className="danger-text">
                  {data.lastErrorClass ? `${data.lastErrorClass}: ` : ''}
                  {data.lastError}
                </dd>
              </>
            ) : null}
            {data.traceId ? (
              <>
                <dt>Trace id</dt>
                <dd className="mono">{data.traceId}</dd>
              </>
            ) : null}
          </dl>
        </section>

        <section className="card" aria-labelledby="timeline-heading">
          <h2 id="timeline-heading">Timeline</h2>
          {data.timeline.length === 0 ? (
            <p className="muted">Nothing recorded yet.</p>
          ) : (
            <ol className="timeline" data-testid="job-timeline">
              {data.timeline.map((entry, i) => (
                <li key={`${entry.at}-${i}`}>
                  <StatusBadge status={entry.toStatus} /> <span>{entry.reason}</span>
                  <div className="when">
                    {formatDateTime(entry.at)} · attempt {entry.attempt}
                    {entry.fromStatus ? ` · from ${entry.fromStatus}` : ''}
                  </div>
                </li>
              ))}
            </ol>
          )}
        </section>
      </div>

      <section className="card" aria-labelledby="attempts-heading">
        <h2 id="attempts-heading">Attempts</h2>
        {data.attempts.length === 0 ? (
          <p className="muted">Not dispatched yet.</p>
        ) : (
          <TableRegion label="Attempts table">
            <ListTable testId="job-attempts" columns={ATTEMPT_COLUMNS} rows={data.attempts}>
              {(attempt) => (
                <tr key={attempt.attempt}>
                  <td className="num">{attempt.attempt}</td>
                  <td>
                    <StatusBadge status={attempt.status} />
                  </td>
                  <td className="mono">{attempt.workerId ?? '—'}</td>
                  <td className="nowrap">{formatDateTime(attempt.dispatchedAt)}</td>
                  <td className="nowrap">{formatDateTime(attempt.startedAt)}</td>
                  <td className="num">{formatDuration(attempt.durationMs)}</td>
                  <td>
                    {attempt.error ? (
                      <span className="danger-text">
                        {attempt.errorClass ? `${attempt.errorClass}: ` : ''}
                        {attempt.error}
                      </span>
                    ) : (
                      '—'
                    )}
                  </td>
                </tr>
              )}
            </ListTable>
          </TableRegion>
        )}
      </section>

      <LogTail jobId={data.jobId} running={!terminal} />

      <div className="grid grid-2">
        <section className="card" aria-labelledby="payload-heading">
          <h2 id="payload-heading">Payload</h2>
          <JsonBlock value={data.payload} label="Payload" />
        </section>
        <section className="card" aria-labelledby="result-heading" data-testid="job-result">
          <h2 id="result-heading">Result</h2>
          {data.result ? <JsonBlock value={data.result} label="Result" /> : <p className="muted">No result{terminal ? '' : ' yet'}.</p>}
        </section>
      </div>

      <section className="card" aria-labelledby="deps-heading">
        <h2 id="deps-heading">Dependencies</h2>
        <Dependencies job={data} />
      </section>
    </>
  );
}
