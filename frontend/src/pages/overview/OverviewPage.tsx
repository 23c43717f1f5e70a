import {
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { getAnalytics, getJobSeries, listDeadLetters, listQueues, listWorkers } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { JOB_STATUSES, type WorkerList } from '../../api/types';
import { useIsAdmin } from '../../auth/hooks';
import { ListTable, type Column } from '../../components/ListTable';
import { PageHeader } from '../../components/PageHeader';
import { Stat } from '../../components/Stat';
import { StatusBadge } from '../../components/StatusBadge';
import { TypesWithoutWorkers } from '../../components/TypesWithoutWorkers';
import { ErrorState, Loading } from '../../components/states';
import { formatDuration, formatNumber, formatPercent, priorityLabel } from '../../lib/format';
import { useJobTypes } from '../../lib/useJobTypes';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useScopedQuery } from '../../project/useScopedQuery';

const BUCKET_MINUTES = 5;
const BUCKETS = 12;

const SERIES_COLUMNS: readonly Column[] = [
  { label: 'Window from' },
  { label: 'Succeeded', className: 'num' },
  { label: 'Dead', className: 'num' },
  { label: 'Cancelled', className: 'num' },
  { label: 'Not finished', className: 'num' },
];

const QUEUE_COLUMNS: readonly Column[] = [
  { label: 'Queue and priority' },
  { label: 'Queued', className: 'num' },
  { label: 'Oldest waits', className: 'num' },
  { label: <span className="visually-hidden">Share</span> },
];

interface SeriesPoint {
  label: string;
  from: string;
  succeeded: number;
  dead: number;
  cancelled: number;
  unfinished: number;
}

/** Outcome of the jobs created in each of the last 12 five-minute windows (one request). */
async function fetchSeries(signal: AbortSignal): Promise<SeriesPoint[]> {
  const series = await getJobSeries(BUCKET_MINUTES, BUCKETS, signal);
  const time = new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
  return series.buckets.map((bucket) => ({
    label: time.format(new Date(bucket.start)),
    from: bucket.start,
    succeeded: bucket.succeeded,
    dead: bucket.dead,
    cancelled: bucket.cancelled,
    unfinished: bucket.unfinished,
  }));
}

/** Alive workers, or "not judged" while the scheduler reads no heartbeats (WorkersPage). */
function liveWorkers(workers: WorkerList): string {
  if (workers.heartbeatHorizon === null && (workers.counts.unknown ?? 0) > 0) return 'not judged';
  return formatNumber(workers.counts.alive ?? 0);
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
  const series = useScopedQuery({
    queryKey: queryKeys.analyticsSeries(BUCKET_MINUTES, BUCKETS),
    queryFn: ({ signal }) => fetchSeries(signal),
    // the windows move with the clock even without events
    refetchInterval: poll === false ? 60_000 : poll,
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
  const workers = useScopedQuery({
    queryKey: queryKeys.workers,
    queryFn: ({ signal }) => listWorkers(60, signal),
    // heartbeats are not on the live socket: poll
    refetchInterval: 5_000,
    enabled: isAdmin,
  });
  // workers announce their types on their own clock, not on the live socket: poll
  const jobTypes = useJobTypes({ poll: true });

  const data = totals.data;

  return (
    <>
      <PageHeader title="Overview" link={submit ? { to: '/submit', label: 'Submit a job' } : undefined} />

      {jobTypes.data ? <TypesWithoutWorkers types={jobTypes.data.types} /> : null}

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
                value={workers.data ? liveWorkers(workers.data) : workers.isError ? 'n/a' : '…'}
                testId="stat-workers"
              />
            ) : null}
          </dl>
        ) : null}
      </section>

      {data ? (
        <section className="card" aria-labelledby="status-heading">
          <h2 id="status-heading">Jobs by status</h2>
          <ul className="toolbar" style={{ listStyle: 'none', padding: 0 }} data-testid="status-counts">
            {JOB_STATUSES.map((status) => (
              <li key={status}>
                <Link to={`/jobs?status=${status}`} aria-label={`${status}: ${data.countsByStatus[status] ?? 0} jobs`}>
                  <StatusBadge status={status} label={`${status} ${formatNumber(data.countsByStatus[status] ?? 0)}`} />
                </Link>
              </li>
            ))}
          </ul>
        </section>
      ) : null}

      <div className="grid grid-2">
        <section className="card" aria-labelledby="series-heading">
          <h2 id="series-heading">Outcomes over the last hour</h2>
          <p className="muted" id="series-desc">
            Jobs created in each 5-minute window, by how they ended.
          </p>
          {series.isPending ? <Loading /> : null}
          {series.isError ? <ErrorState error={series.error} onRetry={() => void series.refetch()} /> : null}
          {series.data ? (
            <>
              <div
                className="chart-box"
                role="img"
                aria-label={`Bar chart: ${series.data.reduce((n, p) => n + p.succeeded, 0)} succeeded, ${series.data.reduce((n, p) => n + p.dead, 0)} dead in the last hour`}
                aria-describedby="series-desc"
              >
                <ResponsiveContainer width="100%" height="100%">
                  <BarChart data={series.data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
                    <CartesianGrid strokeDasharray="3 3" />
                    <XAxis dataKey="label" fontSize={12} />
                    <YAxis allowDecimals={false} fontSize={12} />
                    <Tooltip />
                    <Legend />
                    <Bar dataKey="succeeded" name="Succeeded" stackId="a" fill="#1f8a3b" />
                    <Bar dataKey="dead" name="Dead (failed)" stackId="a" fill="#c0263a" />
                    <Bar dataKey="cancelled" name="Cancelled" stackId="a" fill="#6b7280" />
                    <Bar dataKey="unfinished" name="Not finished" stackId="a" fill="#93b4e0" />
                  </BarChart>
                </ResponsiveContainer>
              </div>
              <details>
                <summary>Show as table</summary>
                <ListTable caption="Outcomes per 5-minute window" hiddenCaption columns={SERIES_COLUMNS} rows={series.data}>
                  {(point) => (
                    <tr key={point.from}>
                      <td>{point.label}</td>
                      <td className="num">{point.succeeded}</td>
                      <td className="num">{point.dead}</td>
                      <td className="num">{point.cancelled}</td>
                      <td className="num">{point.unfinished}</td>
                    </tr>
                  )}
                </ListTable>
              </details>
            </>
          ) : null}
        </section>

        <section className="card" aria-labelledby="queues-heading">
          <h2 id="queues-heading">Queue depth by priority</h2>
          <p className="muted">Jobs dispatched and waiting for a worker, and how long the oldest has waited.</p>
          {queues.isPending ? <Loading /> : null}
          {queues.isError ? <ErrorState error={queues.error} onRetry={() => void queues.refetch()} /> : null}
          {queues.data ? (
            <ListTable testId="queue-depth" columns={QUEUE_COLUMNS} rows={queues.data.items}>
              {(row) => {
                const max = Math.max(1, ...queues.data.items.map((r) => r.queuedJobs));
                return (
                  <tr key={row.queue}>
                    <th scope="row">
                      {row.namedQueue === 'default' ? (
                        <Link to={`/jobs?status=queued&priority=${row.priority}`}>
                          {priorityLabel(row.priority)} ({row.priority})
                        </Link>
                      ) : (
                        <>
                          {row.namedQueue}: {priorityLabel(row.priority)} ({row.priority})
                          {row.consumers === 0 ? <span className="muted"> · no worker</span> : null}
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
          {isAdmin && workers.data ? (
            <p>
              <Link to="/workers">
                {workers.data.counts.alive ?? 0} live worker{(workers.data.counts.alive ?? 0) === 1 ? '' : 's'}
              </Link>{' '}
              running {workers.data.items.filter((w) => w.status !== 'dead').reduce((n, w) => n + w.activeJobs, 0)} jobs
              of {workers.data.items.filter((w) => w.status !== 'dead').reduce((n, w) => n + w.concurrency, 0)} slots.
            </p>
          ) : null}
        </section>
      </div>
    </>
  );
}
