import { act, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import { authStore } from '../../api/instance';
import type { WorkerList, WorkerView } from '../../api/types';
import { fakeTokens, renderWithProviders, seriousViolations } from '../../test/utils';
import { WorkersPage } from './WorkersPage';

vi.mock('../../api/endpoints', () => ({ listWorkers: vi.fn() }));

const listWorkers = vi.mocked(endpoints.listWorkers);

function worker(id: string, status: WorkerView['status'], secondsAgo: number): WorkerView {
  return {
    id,
    hostname: `host-${id}`,
    pid: 100,
    version: '1.0.0',
    queues: ['jobs.ready.high'],
    concurrency: 4,
    activeJobs: 2,
    startedAt: new Date(Date.now() - 3_600_000).toISOString(),
    lastHeartbeatAt: new Date(Date.now() - secondsAgo * 1_000).toISOString(),
    status,
  };
}

function list(items: WorkerView[], heartbeatHorizon: string | null): WorkerList {
  const counts: Record<string, number> = { alive: 0, stopping: 0, dead: 0, unknown: 0 };
  for (const item of items) counts[item.status] = (counts[item.status] ?? 0) + 1;
  return { items, counts, heartbeatHorizon };
}

const cards = () => screen.getAllByTestId('worker-card');
const card = (id: string) => cards().find((c) => c.textContent.includes(id))!;

describe('<WorkersPage>', () => {
  beforeEach(() => {
    listWorkers.mockReset();
    act(() => authStore.getState().login(fakeTokens({ role: 'admin', email: 'admin@test.com' })));
  });
  afterEach(() => act(() => authStore.getState().logout()));

  it('draws no active-job bar for a dead worker and says how far the scheduler has read', async () => {
    const horizon = new Date(Date.now() - 30_000).toISOString(); // the scheduler is 30 s behind
    listWorkers.mockResolvedValue(list([worker('w-alive', 'alive', 31), worker('w-dead', 'dead', 300)], horizon));
    const { container } = renderWithProviders(<WorkersPage />);
    await waitFor(() => expect(cards()).toHaveLength(2));
    expect(card('w-alive')).toHaveAttribute('data-status', 'alive');
    expect(within(card('w-alive')).getByRole('progressbar', { name: 'Active jobs' })).toBeInTheDocument();
    expect(within(card('w-dead')).queryByRole('progressbar')).toBeNull();
    expect(card('w-dead')).toHaveTextContent('No active jobs: the worker is dead.');
    expect(screen.getByTestId('workers-horizon')).toHaveTextContent(/read heartbeats up to 3\d s ago/);
    expect(screen.queryByTestId('workers-not-judged')).toBeNull();
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('judges no worker while the scheduler reads no heartbeats', async () => {
    listWorkers.mockResolvedValue(list([worker('w-a', 'unknown', 40), worker('w-b', 'unknown', 41)], null));
    const { container } = renderWithProviders(<WorkersPage />);
    await waitFor(() => expect(cards()).toHaveLength(2));
    expect(screen.getByTestId('workers-not-judged')).toHaveTextContent('Not judged: the scheduler is not reading heartbeats.');
    expect(screen.getByTestId('workers-counts')).toHaveTextContent('0 alive, 0 stopping, 0 dead, 2 not judged');
    for (const id of ['w-a', 'w-b']) {
      expect(card(id)).toHaveAttribute('data-status', 'unknown');
      expect(card(id)).toHaveTextContent('not judged');
      expect(within(card(id)).getByRole('progressbar', { name: 'Active jobs (last reported)' })).toBeInTheDocument();
    }
    expect(await seriousViolations(container)).toEqual([]);
  });
});
