/** How the Workers page orders and groups workers: live ones first, the dead apart. */
import type { WorkerStatus, WorkerView } from '../../api/types';

const STATUS_ORDER: Record<WorkerStatus, number> = { alive: 0, quiet: 1, stopping: 2, unknown: 3, dead: 4 };

/** Ids compare with their numbers by value: worker-2 before worker-10. */
const ids = new Intl.Collator(undefined, { numeric: true, sensitivity: 'base' });

export function byStatusThenId(a: WorkerView, b: WorkerView): number {
  return STATUS_ORDER[a.status] - STATUS_ORDER[b.status] || ids.compare(a.id, b.id);
}

/** The workers to show as cards (every one not dead) and the dead ones, each group in order. */
export function groupWorkers(workers: readonly WorkerView[]): { live: WorkerView[]; dead: WorkerView[] } {
  const sorted = [...workers].sort(byStatusThenId);
  return {
    live: sorted.filter((worker) => worker.status !== 'dead'),
    dead: sorted.filter((worker) => worker.status === 'dead'),
  };
}

/** Whether an admin's command can still change the worker: a dead or stopping one takes none. */
export function commandsOpen(worker: WorkerView): { quiet: boolean; stop: boolean } {
  const reachable = worker.status !== 'dead' && worker.status !== 'stopping';
  return { quiet: reachable && !worker.quiet, stop: reachable };
}
