import { act, fireEvent, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import { authStore } from '../../api/instance';
import type { RunningJob, WorkerList, WorkerView } from '../../api/types';
import { fakeTokens, renderWithProviders, seriousViolations } from '../../test/utils';
import { WorkersPage } from './WorkersPage';

vi.mock('../../api/endpoints', () => ({ listWorkers: vi.fn(), commandWorker: vi.fn() }));

const listWorkers = vi.mocked(endpoints.listWorkers);
const commandWorker = vi.mocked(endpoints.commandWorker);

function worker(id: string, status: WorkerView['status'], secondsAgo: number, extra: Partial<WorkerView> = {}): WorkerView {
  return {
    id,
    hostname: `host-${id}`,
    pid: 100,
    version: '1.0.0',
    queues: ['jobs.ready.high'],
    concurrency: 4,
    activeJobs: 0,
    startedAt: new Date(Date.now() - 3_600_000).toISOString(),
    lastHeartbeatAt: new Date(Date.now() - secondsAgo * 1_000).toISOString(),
    status,
    quiet: status === 'quiet',
    processed: 0,
    failed: 0,
    running: [],
    ...extra,
  };
}

function running(jobId: string, secondsAgo: number, progress: number | null = null): RunningJob {
  return { jobId, jobType: 'email', attempt: 1, startedAt: new Date(Date.now() - secondsAgo * 1_000).toISOString(), progress };
}

function list(items: WorkerView[], heartbeatHorizon: string | null): WorkerList {
  const counts: Record<string, number> = { alive: 0, quiet: 0, stopping: 0, dead: 0, unknown: 0 };
  for (const item of items) counts[item.status] = (counts[item.status] ?? 0) + 1;
  return { items, counts, heartbeatHorizon };
}

const cards = () => screen.getAllByTestId('worker-card');
const card = (id: string) => cards().find((c) => c.getAttribute('data-worker-id') === id)!;
const JOB = '0b8f2c1e-1111-4222-8333-444455556666';

describe('<WorkersPage>', () => {
  beforeEach(() => {
    listWorkers.mockReset();
    commandWorker.mockReset();
    act(() => authStore.getState().login(fakeTokens({ role: 'admin', email: 'admin@test.com' })));
  });
  afterEach(() => {
    vi.useRealTimers();
    act(() => authStore.getState().logout());
  });

  it('shows live workers first in numeric order and keeps the dead behind a disclosure', async () => {
    const horizon = new Date(Date.now() - 30_000).toISOString(); // the scheduler is 30 s behind
    const dead = Array.from({ length: 14 }, (_, i) => worker(`w-dead-${i + 1}`, 'dead', 300));
    listWorkers.mockResolvedValue(
      list([...dead, worker('w-10', 'alive', 31), worker('w-9', 'quiet', 31), worker('w-2', 'alive', 31)], horizon),
    );
    const { container } = renderWithProviders(<WorkersPage />);
    await waitFor(() => expect(cards()).toHaveLength(3));
    expect(cards().map((c) => c.getAttribute('data-worker-id'))).toEqual(['w-2', 'w-10', 'w-9']);
    const disclosure = screen.getByTestId('dead-workers');
    expect(disclosure).not.toHaveAttribute('open');
    expect(within(disclosure).getByText('14 dead workers')).toBeInTheDocument();
    const deadIds = within(disclosure).getAllByTestId('dead-worker').map((row) => row.getAttribute('data-worker-id'));
    expect(deadIds.slice(0, 3)).toEqual(['w-dead-1', 'w-dead-2', 'w-dead-3']);
    expect(deadIds.at(-1)).toBe('w-dead-14');
    expect(screen.getByTestId('workers-counts')).toHaveTextContent('2 alive, 1 quiet, 0 stopping, 14 dead');
    expect(screen.getByTestId('workers-horizon')).toHaveTextContent(/read heartbeats up to 3\d s ago/);
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('lists what each worker runs with a job link and a ticking elapsed time, and its counts', async () => {
    vi.useFakeTimers({ shouldAdvanceTime: true });
    const busy = worker('w-1', 'alive', 1, { processed: 1234, failed: 7, running: [running(JOB, 42, 50)] });
    listWorkers.mockResolvedValue(list([busy, worker('w-2', 'alive', 1)], new Date().toISOString()));
    renderWithProviders(<WorkersPage />);
    await waitFor(() => expect(cards()).toHaveLength(2));
    const job = within(card('w-1')).getByTestId('worker-job');
    expect(within(job).getByRole('link', { name: `Job ${JOB}, email` })).toHaveAttribute('href', `/jobs/${JOB}`);
    expect(within(job).getByTestId('worker-job-elapsed')).toHaveTextContent(/^4[23] s · 50 %$/);
    act(() => {
      vi.advanceTimersByTime(5_000);
    });
    expect(within(job).getByTestId('worker-job-elapsed')).toHaveTextContent(/^4[78] s · 50 %$/);
    expect(within(card('w-1')).getByTestId('worker-summary')).toHaveTextContent('1 of 4 running');
    expect(within(card('w-1')).getByTestId('worker-processed')).toHaveTextContent('1,234 processed');
    expect(within(card('w-1')).getByTestId('worker-failed')).toHaveTextContent('7 failed');
    expect(card('w-2')).toHaveTextContent('Idle: no job running.');
  });

  it('sends quiet and stop after a confirm, and offers only what can still change', async () => {
    listWorkers.mockResolvedValue(
      list(
        [worker('w-1', 'alive', 1), worker('w-2', 'quiet', 1), worker('w-3', 'stopping', 1), worker('w-4', 'dead', 300)],
        new Date().toISOString(),
      ),
    );
    commandWorker.mockResolvedValue({ workerId: 'w-1', command: 'quiet', requestedBy: 'admin@test.com', requestedAt: '' });
    const { container } = renderWithProviders(<WorkersPage />);
    await waitFor(() => expect(cards()).toHaveLength(3));
    expect(within(card('w-2')).queryByTestId('worker-quiet')).toBeNull(); // already quiet
    expect(within(card('w-2')).getByTestId('worker-stop')).toBeInTheDocument();
    expect(within(card('w-3')).queryByRole('group', { name: 'Commands for w-3' })).toBeNull();

    fireEvent.click(within(card('w-1')).getByTestId('worker-quiet'));
    expect(commandWorker).not.toHaveBeenCalled(); // asked first
    expect(await seriousViolations(container)).toEqual([]);
    fireEvent.click(within(card('w-1')).getByTestId('worker-quiet-confirm'));
    await waitFor(() => expect(commandWorker).toHaveBeenCalledWith('w-1', 'quiet'));
    const refetches = listWorkers.mock.calls.length;
    await waitFor(() => expect(listWorkers.mock.calls.length).toBeGreaterThan(refetches)); // shown at once

    fireEvent.click(within(card('w-2')).getByTestId('worker-stop'));
    fireEvent.click(within(card('w-2')).getByTestId('worker-stop-confirm'));
    await waitFor(() => expect(commandWorker).toHaveBeenCalledWith('w-2', 'stop'));
  });

  it('judges no worker while the scheduler reads no heartbeats', async () => {
    listWorkers.mockResolvedValue(list([worker('w-a', 'unknown', 40), worker('w-b', 'unknown', 41)], null));
    renderWithProviders(<WorkersPage />);
    await waitFor(() => expect(cards()).toHaveLength(2));
    expect(screen.getByTestId('workers-not-judged')).toHaveTextContent('Not judged: the scheduler is not reading heartbeats.');
    expect(screen.getByTestId('workers-counts')).toHaveTextContent('0 alive, 0 quiet, 0 stopping, 0 dead, 2 not judged');
    for (const id of ['w-a', 'w-b']) {
      expect(card(id)).toHaveAttribute('data-status', 'unknown');
      expect(card(id)).toHaveTextContent('not judged');
      expect(card(id)).toHaveTextContent('0 of 4 running (last reported)');
    }
    expect(screen.queryByTestId('dead-workers')).toBeNull();
  });
});
