import { useEffect, useState } from 'react';
import { isApiError } from '../../api/client';
import { listWorkers } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { WorkerList } from '../../api/types';
import { useIsAdmin } from '../../auth/hooks';
import { ProgressBar } from '../../components/ProgressBar';
import { StatusBadge } from '../../components/StatusBadge';
import { PageHeader } from '../../components/PageHeader';
import { QueryList } from '../../components/QueryList';
import { formatAge, formatDateTime } from '../../lib/format';
import { usePageTitle } from '../../lib/usePageTitle';
import { Link } from '../../project/links';
import { useScopedQuery } from '../../project/useScopedQuery';

function useNow(intervalMs: number): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = setInterval(() => setNow(Date.now()), intervalMs);
    return () => clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/** The scheduler's reading may trail the clock by a tick or a batch; say so past this lag. */
const LAG_WORTH_SAYING_MS = 5_000;

function Judgement({ workers, now }: { workers: WorkerList; now: number }) {
  if (workers.items.length === 0) return null;
  if (workers.heartbeatHorizon === null) {
    return (
      <div className="card" role="note" data-testid="workers-not-judged">
        <strong>Not judged: the scheduler is not reading heartbeats.</strong> No worker is called alive or dead
        until it reads them again; each card shows the last heartbeat it applied.
      </div>
    );
  }
  if (now - new Date(workers.heartbeatHorizon).getTime() < LAG_WORTH_SAYING_MS) return null;
  return (
    <p className="muted" data-testid="workers-horizon">
      The scheduler has read heartbeats up to{' '}
      <time dateTime={workers.heartbeatHorizon} title={formatDateTime(workers.heartbeatHorizon)}>
        {formatAge(workers.heartbeatHorizon, now)}
      </time>
      : workers are judged against that, not against the clock.
    </p>
  );
}

function AdminsOnly() {
  return (
    <div className="card" data-testid="admins-only">
      <h2 style={{ marginTop: 0 }}>Admins only</h2>
      <p>
        The worker fleet is visible to administrators. You can follow your own jobs on the{' '}
        <Link to="/jobs">Jobs</Link> page.
      </p>
    </div>
  );
}

export function WorkersPage() {
  usePageTitle('Workers');
  const isAdmin = useIsAdmin();
  const now = useNow(1_000);
  const [includeDead, setIncludeDead] = useState(60);
  const workers = useScopedQuery({
    queryKey: [...queryKeys.workers, includeDead],
    queryFn: ({ signal }) => listWorkers(includeDead, signal),
    enabled: isAdmin,
    // heartbeats do not travel on the live socket: this page polls
    refetchInterval: 3_000,
  });

  if (!isAdmin || (workers.isError && isApiError(workers.error) && workers.error.status === 403)) {
    return (
      <>
        <h1>Workers</h1>
        <AdminsOnly />
      </>
    );
  }

  return (
    <>
      <PageHeader title="Workers">
        <div className="field" style={{ marginBottom: 0 }}>
          <label htmlFor="include-dead">Show dead workers of the last</label>
          <select id="include-dead" value={includeDead} onChange={(e) => setIncludeDead(Number(e.target.value))}>
            <option value={0}>none</option>
            <option value={15}>15 minutes</option>
            <option value={60}>hour</option>
            <option value={1440}>day</option>
          </select>
        </div>
      </PageHeader>
      {workers.data ? (
        <p role="status" data-testid="workers-counts">
          {workers.data.counts.alive ?? 0} alive, {workers.data.counts.stopping ?? 0} stopping, {workers.data.counts.dead ?? 0} dead
          {workers.data.counts.unknown ? `, ${workers.data.counts.unknown} not judged` : ''}
        </p>
      ) : null}
      {workers.data ? <Judgement workers={workers.data} now={now} /> : null}
      <QueryList query={workers} loadingLabel="Loading workers…" empty="No worker has sent a heartbeat recently.">
        {(rows) => (
          <ul className="grid grid-cards" style={{ listStyle: 'none', padding: 0 }} data-testid="workers-grid">
            {rows.map((worker) => (
              <li
                key={worker.id}
                className="card worker-card"
                data-testid="worker-card"
                data-status={worker.status}
                data-worker-id={worker.id}
              >
                <header>
                  <h2>{worker.id}</h2>
                  <StatusBadge status={worker.status} label={worker.status === 'unknown' ? 'not judged' : undefined} />
                </header>
                {worker.status === 'dead' ? (
                  // what it last reported is not running any more: its attempts go elsewhere
                  <p className="muted">No active jobs: the worker is dead.</p>
                ) : (
                  <ProgressBar
                    label={worker.status === 'unknown' ? 'Active jobs (last reported)' : 'Active jobs'}
                    value={worker.activeJobs}
                    max={worker.concurrency}
                  />
                )}
                <dl className="props">
                  <dt>Last heartbeat</dt>
                  <dd>
                    <time dateTime={worker.lastHeartbeatAt} title={formatDateTime(worker.lastHeartbeatAt)}>
                      {formatAge(worker.lastHeartbeatAt, now)}
                    </time>
                  </dd>
                  <dt>Host</dt>
                  <dd>
                    {worker.hostname} (pid {worker.pid})
                  </dd>
                  <dt>Queues</dt>
                  <dd>{worker.queues.map((queue) => queue.replace('jobs.ready.', '')).join(', ')}</dd>
                  <dt>Concurrency</dt>
                  <dd>{worker.concurrency}</dd>
                  <dt>Version</dt>
                  <dd>{worker.version}</dd>
                  <dt>Started</dt>
                  <dd>{formatDateTime(worker.startedAt)}</dd>
                </dl>
              </li>
            ))}
          </ul>
        )}
      </QueryList>
    </>
  );
}
