import { keepPreviousData, useMutation, useQueryClient } from '@tanstack/react-query';
import { useParams } from 'react-router';
import { errorMessage, isApiError } from '../../api/client';
import { getBatch, listJobs, retryFailedBatch } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { JOB_STATUSES, type BatchView } from '../../api/types';
import { BatchProgress } from '../../components/BatchProgress';
import { ConfirmAction } from '../../components/ConfirmAction';
import { Denied } from '../../components/Denied';
import { JobLink } from '../../components/JobLink';
import { ListTable, type Column } from '../../components/ListTable';
import { PageHeader } from '../../components/PageHeader';
import { QueryTable } from '../../components/QueryList';
import { StatusBadge } from '../../components/StatusBadge';
import { ErrorState, Loading } from '../../components/states';
import { formatDateTime, shortId } from '../../lib/format';
import { notify } from '../../lib/notices';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { deniedReason, useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useSearchParams } from '../../project/navigation';
import { useScopedQuery } from '../../project/useScopedQuery';

const JOBS_PAGE_SIZE = 20;
const STATE_COLUMNS: readonly Column[] = [{ label: 'State' }, { label: 'Jobs', className: 'num' }];
const JOB_COLUMNS: readonly Column[] = [
  { label: 'Job' },
  { label: 'Type' },
  { label: 'Status' },
  { label: 'Attempt' },
  { label: 'Created' },
  { label: 'Last error' },
];

/** Every dead member run again (the retry of each job, POST /api/batches/{id}/retry-failed). */
function RetryFailed({ batch }: { batch: BatchView }) {
  const client = useQueryClient();
  const rights = useRights(batch.projectId);
  const retry = useMutation({
    mutationFn: () => retryFailedBatch(batch.batchId),
    onSuccess: (done) => {
      notify(`Retry asked for ${done.jobIds.length} dead job${done.jobIds.length === 1 ? '' : 's'}`);
      void client.invalidateQueries({ queryKey: queryKeys.batches });
      void client.invalidateQueries({ queryKey: queryKeys.jobs });
    },
    onError: (error) => notify(`Failed: ${errorMessage(error)}`, 'error'),
  });
  if (batch.dead === 0) return <p className="muted">No dead job to retry.</p>;
  if (!rights.act) return <Denied testId="batch-retry-denied">{deniedReason(rights, 'act', 'retrying jobs')}</Denied>;
  const count = `${batch.dead} dead job${batch.dead === 1 ? '' : 's'}`;
  return (
    <ConfirmAction
      label={`Retry ${count}`}
      confirmLabel="Yes, retry them"
      question={`Run the ${count} of this batch again, each from a fresh attempt?`}
      onConfirm={() => retry.mutate()}
      busy={retry.isPending}
      danger={false}
      testId="batch-retry-failed"
    />
  );
}

function BatchJobs({ batchId }: { batchId: string }) {
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page') ?? '1') || 1);
  const poll = usePollWhileOffline(5_000);
  const query = { batchId, pageNumber: page, pageSize: JOBS_PAGE_SIZE, sortBy: 'createdAt' as const, sortDirection: 'asc' as const };
  const jobs = useScopedQuery({
    queryKey: queryKeys.jobList(query),
    queryFn: ({ signal }) => listJobs(query, signal),
    placeholderData: keepPreviousData,
    refetchInterval: poll,
  });
  return (
    <QueryTable
      query={jobs}
      loadingLabel="Loading its jobs…"
      empty="The scheduler has recorded none of its jobs yet."
      tableLabel="Jobs of the batch"
      pagination={{ page, onPage: (p) => setParams(p === 1 ? {} : { page: String(p) }), label: 'Pages of its jobs' }}
      testId="batch-jobs"
      columns={JOB_COLUMNS}
    >
      {(job) => (
        <tr key={job.jobId}>
          <td>
            <JobLink jobId={job.jobId} />
          </td>
          <td>{job.type}</td>
          <td>
            <StatusBadge status={job.status} />
          </td>
          <td className="num">
            {job.attempt} of {job.maxAttempts}
          </td>
          <td className="nowrap">{formatDateTime(job.createdAt)}</td>
          <td className="muted">{job.lastError ?? '—'}</td>
        </tr>
      )}
    </QueryTable>
  );
}

/** One batch: who and when, its progress and members by state, the retry of its dead jobs, its jobs. */
export function BatchDetailPage() {
  const { batchId = '' } = useParams();
  usePageTitle(`Batch ${shortId(batchId)}`);
  const poll = usePollWhileOffline(2_000);
  const view = useScopedQuery({
    queryKey: queryKeys.batchView(batchId),
    queryFn: ({ signal }) => getBatch(batchId, signal),
    retry: (count, error) => isApiError(error) && error.status === 404 && count < 5,
    retryDelay: 1_000,
    refetchInterval: (query) => (query.state.data?.finished ? false : poll),
  });
  const batch = view.data;
  return (
    <>
      <PageHeader title={<>Batch <span className="mono">{shortId(batchId)}</span></>}>
        <Link to="/batches">All batches</Link>
      </PageHeader>
      {view.isPending ? <Loading label="Loading the batch…" /> : null}
      {view.isError ? <ErrorState error={view.error} onRetry={() => void view.refetch()} title="Could not read the batch" /> : null}
      {batch ? (
        <>
          <section className="card" aria-labelledby="batch-about">
            <h2 id="batch-about" style={{ marginTop: 0 }}>
              About
            </h2>
            <dl className="props" data-testid="batch-facts">
              <dt>Id</dt>
              <dd className="mono">{batch.batchId}</dd>
              <dt>Owner</dt>
              <dd>{batch.submittedBy}</dd>
              <dt>Submitted</dt>
              <dd>{formatDateTime(batch.createdAt)}</dd>
              <dt>State</dt>
              <dd>{batch.finished ? 'Finished: every job ended' : 'Running'}</dd>
            </dl>
          </section>
          <BatchProgress batchId={batch.batchId} linked={false} />
          <section className="card" aria-labelledby="batch-states">
            <h2 id="batch-states" style={{ marginTop: 0 }}>
              Jobs by state
            </h2>
            <ListTable caption="Jobs of the batch by state" hiddenCaption columns={STATE_COLUMNS} rows={JOB_STATUSES} testId="batch-states-table">
              {(status) => (
                <tr key={status}>
                  <td>
                    <StatusBadge status={status} />
                  </td>
                  <td className="num">{batch.counts[status] ?? 0}</td>
                </tr>
              )}
            </ListTable>
            <RetryFailed batch={batch} />
          </section>
          <section className="card" aria-labelledby="batch-jobs-heading">
            <h2 id="batch-jobs-heading" style={{ marginTop: 0 }}>
              Its jobs
            </h2>
            <BatchJobs batchId={batch.batchId} />
          </section>
        </>
      ) : null}
    </>
  );
}
