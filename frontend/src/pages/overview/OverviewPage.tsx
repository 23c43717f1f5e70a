import { getAnalytics, getLiveFigures, listDeadLetters, listQueues } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { JOB_STATUSES, type JobAnalytics, type LiveFigures } from '../../api/types';
import { useIsAdmin } from '../../auth/hooks';
import { ChartsPanel } from '../../components/charts/ChartsPanel';
import { ListTable, type Column } from '../../components/ListTable';
import { PageHeader } from '../../components/PageHeader';
import { Stat } from '../../components/Stat';
import { StatusBadge } from '../../components/StatusBadge';
import { StoreHealthCard } from '../../components/StoreHealthCard';
import { TypesWithoutWorkers } from '../../components/TypesWithoutWorkers';
import { ErrorState, Loading } from '../../components/states';
import { formatDuration, formatNumber, formatPercent, priorityLabel } from '../../lib/format';
import { useJobTypes } from '../../lib/useJobTypes';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useScopedQuery } from '../../project/useScopedQuery';

/** The figures of now are read every second: the Workers page's in-flight totals within it. */
const LIVE_FIGURES_MS = 1_000;

const QUEUE_COLUMNS: readonly Column[] = [
  { label: 'Queue and priority' },
  { label: 'Queued', className: 'num' },
  { label: 'Oldest waits', className: 'num' },
  { label: <span className="visually-hidden">Share</span> },
];

/**
 * Counts by status: the finished ones from the rollups, the unfinished ones counted now (the
 * rollups' answer is refreshed at most every few seconds under load; a count of now every second).
 */
function statusCounts(totals: JobAnalytics, live: LiveFigures | undefined): Record<string, number> {
  return live ? { ...totals.countsByStatus, ...live.unfinishedByStatus } : totals.countsByStatus;
}

/** Running and queued now, and for admins the workers' slots, from one read of now. */
function NowFigures({ live }: { live: LiveFigures }) {
  const running = live.unfinishedByStatus.running ?? 0;
  const queued = live.unfinishedByStatus.queued ?? 0;
  return (
    <p data-testid="now-figures">
      Now: <strong data-testid="now-running">{formatNumber(running)}</strong> running,{' '}
      <strong data-testid="now-queued">{formatNumber(queued)}</strong> queued
      {live.workers ? (
        <>
          {' '}
          · <Link to="/workers">{formatNumber(live.workers.live)} live worker{live.workers.live === 1 ? '' : 's'}</Link>{' '}
          running <strong data-testid="now-in-flight">{formatNumber(live.workers.busySlots)}</strong> jobs of{' '}
          <strong data-testid="now-slots">{formatNumber(live.workers.slots)}</strong> slots
        </>
      ) : null}
      .
    </p>
  );
}

export function OverviewPage() {
  usePageTitle('Overview');
  const isAdmin = useIsAdmin();
  const poll = usePollWhileOffline(10_000);
  const { submit } = useRights();

  const totals = useScopedQuery({
    queryKey: queryKeys.analyticsTotals,
    queryFn: ({ signal }) => getAnalytics({}, signal),
    refetchInterval: poll,
  });
  const live = useScopedQuery({
    queryKey: queryKeys.liveFigures,
    queryFn: ({ signal }) => getLiveFigures(signal),
    // worker heartbeats are not on the live socket, and the totals above refresh at most every
    // few seconds under load: a read of now every second keeps both current
    refetchInterval: LIVE_FIGURES_MS,
  });
  const queues = useScopedQuery({
    queryKey: queryKeys.queueDepths,
    queryFn: ({ signal }) => listQueues(signal),
    refetchInterval: poll,
  });
  const deadLetters = useScopedQuery({
    queryKey: queryKeys.deadLetterOpenCount,
    queryFn: ({ signal }) => listDeadLetters({ status: 'open', pageSize: 1 }, signal),
    refetchInterval: poll,
  });
  // workers announce their types on their own clock, not on the live socket: poll
  const jobTypes = useJobTypes({ poll: true });

  const data = totals.data;
  const counts = data ? statusCounts(data, live.data) : null;
  const workers = live.data?.workers;

  return (
    <>
      <PageHeader title="Overview" link={submit ? { to: '/submit', label: 'Submit a job' } : undefined} />

      {jobTypes.data ? <TypesWithoutWorkers types={jobTypes.data.types} instructions={isAdmin} /> : null}
      <StoreHealthCard />

      <section aria-labelledby="stats-heading">
        <h2 id="stats-heading" className="visually-hidden">
          Key figures
        </h2>
        {totals.isPending ? <Loading label="Loading figures…" /> : null}
        {totals.isError ? <ErrorState error={totals.error} onRetry={() => void totals.refetch()} /> : null}
        {data ? (
          <dl className="grid grid-stats" data-testid="stat-cards">
            <Stat label="Jobs" value={formatNumber(data.total)} testId="stat-total" />
            <Stat label="Success rate" value={formatPercent(data.successRate)} testId="stat-success-rate" />
            <Stat
              label="Finished in the last hour"
              value={formatNumber(data.throughputLastHour)}
              testId="stat-throughput"
            />
            <Stat label="p95 run time" value={formatDuration(data.runtime.p95Ms)} testId="stat-p95" />
            <Stat label="Mean run time" value={formatDuration(data.runtime.meanMs)} />
            <Stat
              label="Open dead letters"
              value={deadLetters.data ? formatNumber(deadLetters.data.totalItems) : deadLetters.isError ? 'n/a' : '…'}
              testId="stat-dead-letters"
            />
            {isAdmin ? (
              <Stat
                label="Live workers"
                value={workers ? formatNumber(workers.live) : live.isError ? 'n/a' : '…'}
                testId="stat-workers"
              />
            ) : null}
          </dl>
        ) : null}
      </section>

      {counts ? (
        <section className="card" aria-labelledby="status-heading">
          <h2 id="status-heading">Jobs by status</h2>
          {live.data ? <NowFigures live={live.data} /> : null}
          <ul className="toolbar" style={{ listStyle: 'none', padding: 0 }} data-testid="status-counts">
            {JOB_STATUSES.map((status) => (
              <li key={status}>
                <Link to={`/jobs?status=${status}`} aria-label={`${status}: ${counts[status] ?? 0} jobs`}>
                  <StatusBadge status={status} label={`${status} ${formatNumber(counts[status] ?? 0)}`} />
                </Link>
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      <ChartsPanel title="Activity" />

      <section className="card" aria-labelledby="queues-heading">
        <h2 id="queues-heading">Queue depth by priority</h2>
        <p className="muted">
          Jobs dispatched and waiting for a worker, and how long the oldest has waited; every known queue, served or not.
        </p>
        {queues.isPending ? <Loading /> : null}
        {queues.isError ? <ErrorState error={queues.error} onRetry={() => void queues.refetch()} /> : null}
        {queues.data ? (
          <ListTable testId="queue-depth" columns={QUEUE_COLUMNS} rows={queues.data.items}>
            {(row) => {
              const max = Math.max(1, ...queues.data.items.map((r) => r.queuedJobs));
              const unserved = row.consumers === 0 ? <span className="muted"> · no worker</span> : null;
              return (
                <tr key={row.queue} data-no-worker={row.consumers === 0}>
                  <th scope="row">
                    {row.namedQueue === 'default' ? (
                      <>
                        <Link to={`/jobs?status=queued&priority=${row.priority}`}>
                          {priorityLabel(row.priority)} ({row.priority})
                        </Link>
                        {unserved}
                      </>
                    ) : (
                      <>
                        {row.namedQueue}: {priorityLabel(row.priority)} ({row.priority})
                        {unserved}
                      </>
                    )}
                  </th>
                  <td className="num">{formatNumber(row.queuedJobs)}</td>
                  <td className="num">
                    {row.oldestAgeSeconds === null ? '—' : formatDuration(row.oldestAgeSeconds * 1000)}
                  </td>
                  <td style={{ width: '50%' }}>
                    <div className="progress-track" aria-hidden="true">
                      <div className="progress-fill" style={{ width: `${(row.queuedJobs / max) * 100}%` }} />
                    </div>
                  </td>
                </tr>
              );
            }}
          </ListTable>
        ) : null}
      </section>
    </>
  );
}
