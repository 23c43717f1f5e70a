import type { WorkerView } from '../../api/types';
import { StatusBadge } from '../../components/StatusBadge';
import { formatAge, formatDateTime, formatNumber } from '../../lib/format';
import { RunningJobs } from './RunningJobs';
import { WorkerCommands } from './WorkerCommands';

const STATUS_LABELS: Partial<Record<WorkerView['status'], string>> = { unknown: 'not judged' };

/** One worker not dead: state, what it runs, its counts; the rest behind "Details". */
export function WorkerCard({ worker, now, canCommand }: { worker: WorkerView; now: number; canCommand: boolean }) {
  const headingId = `worker-${worker.id}`;
  return (
    <li
      className="card worker-card"
      data-testid="worker-card"
      data-status={worker.status}
      data-worker-id={worker.id}
      aria-labelledby={headingId}
    >
      <header>
        <h2 id={headingId} className="mono">
          {worker.id}
        </h2>
        <StatusBadge status={worker.status} label={STATUS_LABELS[worker.status]} />
      </header>
      <p className="worker-summary" data-testid="worker-summary">
        <span>
          {worker.running.length} of {worker.concurrency} running
          {worker.status === 'unknown' ? ' (last reported)' : ''}
        </span>
        <span data-testid="worker-processed">{formatNumber(worker.processed)} processed</span>
        <span data-testid="worker-failed" className={worker.failed > 0 ? 'worker-failed' : undefined}>
          {formatNumber(worker.failed)} failed
        </span>
        <span>
          heartbeat{' '}
          <time dateTime={worker.lastHeartbeatAt} title={formatDateTime(worker.lastHeartbeatAt)}>
            {formatAge(worker.lastHeartbeatAt, now)}
          </time>
        </span>
      </p>
      <RunningJobs jobs={worker.running} now={now} workerId={worker.id} />
      {canCommand ? <WorkerCommands worker={worker} /> : null}
      <details className="worker-details">
        <summary>Details</summary>
        <dl className="props">
          <dt>Host</dt>
          <dd>
            {worker.hostname} (pid {worker.pid})
          </dd>
          <dt>Queues</dt>
          <dd>{worker.queues.map((queue) => queue.replace('jobs.ready.', '')).join(', ')}</dd>
          <dt>Version</dt>
          <dd>{worker.version}</dd>
          <dt>Started</dt>
          <dd>{formatDateTime(worker.startedAt)}</dd>
        </dl>
      </details>
    </li>
  );
}
