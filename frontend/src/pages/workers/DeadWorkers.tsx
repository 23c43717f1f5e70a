import type { WorkerView } from '../../api/types';
import { formatAge, formatDateTime, formatNumber } from '../../lib/format';

/** Dead workers, collapsed behind their count: they must not bury the live ones. */
export function DeadWorkers({ workers, now }: { workers: readonly WorkerView[]; now: number }) {
  if (workers.length === 0) return null;
  return (
    <details className="card dead-workers" data-testid="dead-workers">
      <summary>
        {workers.length} dead {workers.length === 1 ? 'worker' : 'workers'}
      </summary>
      <ul className="dead-worker-list">
        {workers.map((worker) => (
          <li key={worker.id} data-testid="dead-worker" data-worker-id={worker.id}>
            <span className="mono">{worker.id}</span>{' '}
            <span className="muted">
              last heartbeat{' '}
              <time dateTime={worker.lastHeartbeatAt} title={formatDateTime(worker.lastHeartbeatAt)}>
                {formatAge(worker.lastHeartbeatAt, now)}
              </time>
              , {formatNumber(worker.processed)} processed, {formatNumber(worker.failed)} failed
              {worker.running.length > 0 ? `, ${worker.running.length} jobs awaiting the reaper` : ''}
            </span>
          </li>
        ))}
      </ul>
    </details>
  );
}
