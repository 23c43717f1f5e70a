import { describe, expect, it } from 'vitest';
import type { WorkerView } from '../../api/types';
import { elapsed } from './elapsed';
import { commandsOpen, groupWorkers } from './workerOrder';

function worker(id: string, status: WorkerView['status'], quiet = false): WorkerView {
  const at = '2026-01-01T00:00:00Z';
  return {
    id,
    hostname: 'h',
    pid: 1,
    version: '1',
    queues: [],
    concurrency: 1,
    activeJobs: 0,
    startedAt: at,
    lastHeartbeatAt: at,
    status,
    quiet,
    processed: 0,
    failed: 0,
    running: [],
  };
}

describe('worker order', () => {
  it('puts live workers first, numbers by value, the dead apart', () => {
    const { live, dead } = groupWorkers([
      worker('w-10', 'alive'),
      worker('w-3', 'dead'),
      worker('w-1', 'stopping'),
      worker('w-9', 'alive'),
      worker('w-20', 'dead'),
      worker('w-2', 'quiet', true),
    ]);
    expect(live.map((w) => w.id)).toEqual(['w-9', 'w-10', 'w-2', 'w-1']);
    expect(dead.map((w) => w.id)).toEqual(['w-3', 'w-20']);
  });

  it('offers quiet to a worker taking jobs and stop to any it can still reach', () => {
    expect(commandsOpen(worker('a', 'alive'))).toEqual({ quiet: true, stop: true });
    expect(commandsOpen(worker('a', 'quiet', true))).toEqual({ quiet: false, stop: true });
    expect(commandsOpen(worker('a', 'stopping', true))).toEqual({ quiet: false, stop: false });
    expect(commandsOpen(worker('a', 'dead'))).toEqual({ quiet: false, stop: false });
  });

  it('counts elapsed time in whole seconds, then minutes', () => {
    expect(elapsed(7_900)).toBe('7 s');
    expect(elapsed(125_000)).toBe('2 min 5 s');
  });
});
