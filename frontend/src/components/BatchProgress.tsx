import { isApiError } from '../api/client';
import { batchShortfall } from './batchShortfall';
import { getBatch, getBatchStatus } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';
import { usePollWhileOffline } from '../live/context';
import { Link } from '../project/links';
import { useScopedQuery } from '../project/useScopedQuery';
import { ProgressBar } from './ProgressBar';
import { ErrorState, Loading } from './states';

function notRecorded(error: unknown): boolean {
  return isApiError(error) && error.status === 404;
}

/**
 * A batch's progress: how many members the submission service published
 * (GET /api/batches/{id}/status) and how they ran (GET /api/batches/{id}).
 */
export function BatchProgress({ batchId, title, linked = true }: { batchId: string; title?: string; linked?: boolean }) {
  const poll = usePollWhileOffline(2_000);
  const status = useScopedQuery({
    queryKey: queryKeys.batchStatus(batchId),
    queryFn: ({ signal }) => getBatchStatus(batchId, signal),
    // publishing is not on the live socket; poll until every member is out
    refetchInterval: (query) =>
      query.state.data && query.state.data.published >= query.state.data.size ? false : 1_000,
  });
  const view = useScopedQuery({
    queryKey: queryKeys.batchView(batchId),
    queryFn: ({ signal }) => getBatch(batchId, signal),
    retry: (count, error) => isApiError(error) && error.status === 404 && count < 20,
    retryDelay: 1_000,
    refetchInterval: (query) => (query.state.data?.finished ? false : poll),
  });

  const published = status.data;
  const run = view.data;
  const name = title ?? published?.name ?? null;
  const terminal = run ? run.succeeded + run.dead + run.cancelled : 0;
  // null: the submission service answered 404 (the batch is past its retention there)
  const publishedView = published ?? (notRecorded(status.error) ? null : undefined);
  const short = run ? batchShortfall(run, publishedView) : null;

  return (
    <article className="card" aria-label={`Batch ${name ?? batchId}`} data-testid="batch-progress" data-batch-id={batchId}>
      <header className="page-header">
        <h3 style={{ margin: 0 }}>
          {name ? `${name} ` : 'Batch '}
          <span className="mono muted">{batchId.slice(0, 8)}</span>
        </h3>
        <div className="toolbar" style={{ margin: 0 }}>
          {linked ? (
            <Link to={`/batches/${batchId}`} aria-label={`Open batch ${name ?? batchId.slice(0, 8)}`} data-testid="batch-open">
              Open batch
            </Link>
          ) : null}
          <Link to={`/jobs?batchId=${batchId}`}>Show its jobs</Link>
        </div>
      </header>
      {status.isError && !notRecorded(status.error) ? (
        <ErrorState error={status.error} title="Could not read the batch" />
      ) : null}
      {published ? (
        <ProgressBar label="Published" value={published.published} max={published.size} />
      ) : null}
      {run ? (
        <>
          <ProgressBar
            label="Finished"
            value={terminal}
            max={run.total}
            segments={[
              { value: run.succeeded, tone: 'ok', label: 'succeeded' },
              { value: run.dead, tone: 'bad', label: 'dead' },
              { value: run.cancelled, tone: 'neutral', label: 'cancelled' },
            ]}
            detail={`${terminal} of ${run.total}: ${run.succeeded} succeeded, ${run.dead} dead, ${run.cancelled} cancelled${run.finished ? ' (finished)' : ''}`}
          />
          <p className="muted" style={{ margin: 0 }}>
            {run.counts.running ?? 0} running, {(run.counts.queued ?? 0) + (run.counts.pending ?? 0)} waiting,{' '}
            {(run.counts.scheduled ?? 0) + (run.counts.blocked ?? 0)} scheduled or blocked; {run.recorded} of {run.total} recorded
          </p>
          {short ? (
            <p className="muted" data-testid="batch-shortfall" style={{ margin: 0 }}>
              Not recorded: {short.reason}
            </p>
          ) : null}
        </>
      ) : view.isError && !notRecorded(view.error) ? (
        <ErrorState error={view.error} title="Could not read the batch's progress" />
      ) : view.failureCount > 0 || notRecorded(view.error) ? (
        <p className="muted">Waiting for the scheduler to record the jobs…</p>
      ) : (
        <Loading label="Loading progress…" />
      )}
    </article>
  );
}
