import { useState } from 'react';
import { isApiError } from '../../api/client';
import { listWorkers } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { WorkerList } from '../../api/types';
import { useIsAdmin } from '../../auth/hooks';
import { PageHeader } from '../../components/PageHeader';
import { QueryList } from '../../components/QueryList';
import { formatAge, formatDateTime } from '../../lib/format';
import { useNow } from '../../lib/time';
import { usePageTitle } from '../../lib/usePageTitle';
import { Link } from '../../project/links';
import { useScopedQuery } from '../../project/useScopedQuery';
import { DeadWorkers } from './DeadWorkers';
import { WorkerCard } from './WorkerCard';
import { groupWorkers } from './workerOrder';

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

function Counts({ counts }: { counts: WorkerList['counts'] }) {
  const n = (status: string) => counts[status] ?? 0;
  return (
    <p role="status" data-testid="workers-counts">
      {n('alive')} alive, {n('quiet')} quiet, {n('stopping')} stopping, {n('dead')} dead
      {n('unknown') ? `, ${n('unknown')} not judged` : ''}
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
    // heartbeats do not travel on the live socket: this page polls (and a job starting or
    // ending on the socket refreshes it, live/cache.ts)
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
      {workers.data ? <Counts counts={workers.data.counts} /> : null}
      {workers.data ? <Judgement workers={workers.data} now={now} /> : null}
      <QueryList query={workers} loadingLabel="Loading workers…" empty="No worker has sent a heartbeat recently.">
        {(rows) => {
          const { live, dead } = groupWorkers(rows);
          return (
            <>
              {live.length > 0 ? (
                <ul className="grid grid-cards worker-grid" data-testid="workers-grid">
                  {live.map((worker) => (
                    <WorkerCard key={worker.id} worker={worker} now={now} canCommand={isAdmin} />
                  ))}
                </ul>
              ) : (
                <p className="muted">No live worker.</p>
              )}
              <DeadWorkers workers={dead} now={now} />
            </>
          );
        }}
      </QueryList>
    </>
  );
}
