import { useParams } from 'react-router';
import { getQueue } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { ChartsPanel } from '../../components/charts/ChartsPanel';
import { PageHeader } from '../../components/PageHeader';
import { Stat } from '../../components/Stat';
import { StatusBadge } from '../../components/StatusBadge';
import { ErrorState, Loading } from '../../components/states';
import { formatDuration, formatNumber } from '../../lib/format';
import { formatConcurrency } from '../../lib/queueForm';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { Link } from '../../project/links';
import { ProjectName } from '../../project/ProjectName';
import { useScopedQuery } from '../../project/useScopedQuery';
import { DepthTable } from './QueueDepth';

/** One queue: its figures now, its depth by state and priority, and its charts over a range. */
export function QueueDetailPage() {
  const { queueId = '' } = useParams();
  const poll = usePollWhileOffline(10_000);
  const queue = useScopedQuery({
    queryKey: queryKeys.queueDetail(queueId),
    queryFn: ({ signal }) => getQueue(queueId, signal),
    refetchInterval: poll,
  });
  const view = queue.data;
  usePageTitle(view ? `Queue ${view.name}` : 'Queue');
  return (
    <>
      <PageHeader title={<>Queue {view ? <span className="mono">{view.name}</span> : null}</>}>
        <Link to="/queues">All queues</Link>
      </PageHeader>
      {queue.isPending ? <Loading label="Loading the queue…" /> : null}
      {queue.isError ? (
        <ErrorState error={queue.error} onRetry={() => void queue.refetch()} title="Could not read the queue" />
      ) : null}
      {view ? (
        <>
          <section className="card" aria-labelledby="queue-now">
            <h2 id="queue-now" style={{ marginTop: 0 }}>
              Now
            </h2>
            <p>
              Project <ProjectName projectId={view.projectId} /> ·{' '}
              <StatusBadge status={view.paused ? 'paused' : 'active'} />
            </p>
            <dl className="grid grid-stats" data-testid="queue-figures">
              <Stat label="Running" value={formatConcurrency(view.running, view.maxConcurrency)} testId="queue-running-now" />
              <Stat label="Waiting" value={formatNumber(view.waiting)} testId="queue-waiting-now" />
              <Stat
                label="Oldest queued"
                value={view.oldestAgeSeconds === null ? '—' : formatDuration(view.oldestAgeSeconds * 1000)}
              />
            </dl>
            <DepthTable name={view.name} depth={view.depth ?? []} />
          </section>
          <ChartsPanel title={`Charts of ${view.name}`} queueId={view.id} />
        </>
      ) : null}
    </>
  );
}
