import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { errorMessage, isApiError } from '../../api/client';
import { cancelJob, getJobSnapshot, retryJob } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { TERMINAL_STATUSES, type JobDetail, type JobSnapshot } from '../../api/types';
import { Denied } from '../../components/Denied';
import { ProgressBar } from '../../components/ProgressBar';
import { ConfirmAction } from '../../components/ConfirmAction';
import { JsonBlock } from '../../components/JsonBlock';
import { ListTable, type Column } from '../../components/ListTable';
import { StatusBadge } from '../../components/StatusBadge';
import { ErrorState, Loading } from '../../components/states';
import { formatDateTime, formatDuration, shortId } from '../../lib/format';
import { notify } from '../../lib/notices';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { deniedReason, useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useScopedQuery } from '../../project/useScopedQuery';
import { JobDependencies } from './JobDependencies';
import { JobSummaryCard } from './JobSummaryCard';
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

/** Job ids are uuids: anything else is not found without asking. */
const JOB_ID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
/** How often a job accepted a moment ago is asked for until the scheduler recorded it. */
const ACCEPTED_POLL_MS = 1_000;

/**
 * The running attempt's progress as its handler last reported it (`ctx.progress`). The API
 * sends it only while the job runs and only the current attempt's, in the same snapshot as the
 * rest of the page, so an older attempt's is never shown.
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

function NotFound({ jobId, onCheckAgain }: { jobId: string; onCheckAgain?: () => void }) {
  return (
    <>
      <h1>Job not found</h1>
      <div className="state" role="status" data-testid="job-not-found">
        <p style={{ marginTop: 0 }}>
          No job <code>{jobId}</code> was found among the jobs you may see: the id may be mistyped, or the job is not
          yours to see.
        </p>
        <Link to="/jobs">Back to the jobs</Link>
        {onCheckAgain ? (
          <>
            {' · '}
            <button type="button" className="link" onClick={onCheckAgain}>
              Check again
            </button>
          </>
        ) : null}
      </div>
    </>
  );
}

/** Read the job again after a command (and the lists that show it). */
function useRefresh(jobId: string): () => void {
  const client = useQueryClient();
  return () => {
    void client.invalidateQueries({ queryKey: queryKeys.jobSnapshot(jobId) });
    void client.invalidateQueries({ queryKey: queryKeys.jobLists });
  };
}

/**
 * A job's page. It renders whole snapshots only (`GET /api/jobs/{id}/snapshot`: header,
 * timeline, attempts and result from one transaction); a live change of the job reads it again
 * (live/cache.ts) and the new snapshot replaces the old one in one render, so no part of the
 * page runs ahead of another. A job accepted a moment ago is asked for until the scheduler has
 * recorded it; an id that is not a job's, or not the caller's, is "not found" at once.
 */
export function JobDetailPage() {
  const { jobId = '' } = useParams();
  usePageTitle(`Job ${shortId(jobId)}`);
  const poll = usePollWhileOffline(3_000);
  const wellFormed = JOB_ID.test(jobId);
  const snapshot = useScopedQuery<JobSnapshot>({
    queryKey: queryKeys.jobSnapshot(jobId),
    queryFn: ({ signal }) => getJobSnapshot(jobId, signal),
    enabled: wellFormed,
    // "not found" is an answer, not an error: only a request that failed (no answer, or a
    // server error) is asked again; a refusal (4xx) is shown as it is
    retry: (count, error) => count < 2 && !(isApiError(error) && error.status >= 400 && error.status < 500),
    retryDelay: 1_000,
    refetchInterval: (query) => {
      const answer = query.state.data;
      if (!answer || answer.state === 'not_found') return false;
      if (answer.state === 'accepted' || !answer.job) return ACCEPTED_POLL_MS;
      const status = answer.job.status;
      if (TERMINAL_STATUSES.includes(status)) return false;
      // a running job's progress comes with its worker's heartbeats (every 2 s) and no live
      // event carries it: read the job every 3 s while it runs, also while the socket is live
      return status === 'running' ? 3_000 : poll;
    },
  });

  if (!wellFormed) return <NotFound jobId={jobId} />;
  if (snapshot.isPending) return <Loading label="Loading the job…" />;
  if (snapshot.isError) {
    return (
      <>
        <h1>Job {shortId(jobId)}</h1>
        <ErrorState error={snapshot.error} onRetry={() => void snapshot.refetch()} />
      </>
    );
  }
  const { state, job } = snapshot.data;
  if (state === 'not_found' || (state === 'recorded' && !job)) {
    return <NotFound jobId={jobId} onCheckAgain={() => void snapshot.refetch()} />;
  }
  if (!job) {
    return (
      <>
        <h1>Job {shortId(jobId)}</h1>
        <div data-testid="job-accepted">
          <Loading label="Accepted: waiting for the scheduler to record the job…" />
        </div>
      </>
    );
  }
  return <JobView data={job} />;
}

function JobView({ data }: { data: JobDetail }) {
  const jobId = data.jobId;
  const refresh = useRefresh(jobId);
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
  const rights = useRights(data.projectId);

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
          <span data-testid="job-status" data-status={data.status} data-attempt={data.attempt}>
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
        <JobSummaryCard job={data} />

        <section className="card" aria-labelledby="timeline-heading">
          <h2 id="timeline-heading">Timeline</h2>
          {data.timeline.length === 0 ? (
            <p className="muted">Nothing recorded yet.</p>
          ) : (
            <ol className="timeline" data-testid="job-timeline">
              {data.timeline.map((entry, i) => (
                <li key={`${entry.at}-${i}`} data-status={entry.toStatus} data-attempt={entry.attempt}>
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
                <tr key={attempt.attempt} data-attempt={attempt.attempt} data-status={attempt.status}>
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
        <JobDependencies job={data} />
      </section>
    </>
  );
}
