import { act, screen, waitFor, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import { authStore } from '../../api/instance';
import type { JobAnalytics, LiveFigures } from '../../api/types';
import { queryKeys } from '../../api/queryKeys';
import { scopedKey } from '../../project/useScopedQuery';
import { builtinTypes, jobType } from '../../test/jobTypes';
import { fakeTokens, renderWithProviders, seriousViolations } from '../../test/utils';
import { OverviewPage } from './OverviewPage';

vi.mock('../../api/endpoints', () => ({
  getAnalytics: vi.fn(() => new Promise(() => undefined)),
  getCharts: vi.fn(() => new Promise(() => undefined)),
  getLiveFigures: vi.fn(() => new Promise(() => undefined)),
  getStoreHealth: vi.fn(() => new Promise(() => undefined)),
  listQueues: vi.fn(() => new Promise(() => undefined)),
  listDeadLetters: vi.fn(() => new Promise(() => undefined)),
  listJobTypes: vi.fn(),
}));

const listJobTypes = vi.mocked(endpoints.listJobTypes);

describe('<OverviewPage> job types without a live worker', () => {
  beforeEach(() => {
    listJobTypes.mockReset();
  });

  it('names the types no live worker serves, with where to read more', async () => {
    listJobTypes.mockResolvedValue({
      types: [...builtinTypes(), jobType('acme.reverse', { liveWorkers: 0 }), jobType('acme.resize', { liveWorkers: 3 })],
    });
    const { container } = renderWithProviders(<OverviewPage />);
    const panel = await screen.findByTestId('types-without-workers');
    expect(within(panel).getByRole('heading', { level: 2 })).toHaveTextContent('No live worker for: acme.reverse');
    // how to start a worker is for admins: a user reads that the jobs wait
    expect(panel).not.toHaveTextContent('WORKER_HANDLER_MODULES');
    expect(panel).toHaveTextContent('An administrator of the platform can start one.');
    expect(within(panel).getByRole('link', { name: 'Job types in the API reference' })).toHaveAttribute(
      'href',
      '/docs#/job%20types/list_job_types_api_v1_job_types_get',
    );
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('lists every idle type, built-in ones too', async () => {
    listJobTypes.mockResolvedValue({
      types: [jobType('email', { liveWorkers: 0 }), jobType('simulate', { liveWorkers: 0 }), jobType('acme.reverse', { liveWorkers: 1 })],
    });
    renderWithProviders(<OverviewPage />);
    expect(await screen.findByRole('heading', { name: 'No live worker for: email, simulate' })).toBeInTheDocument();
  });

  it('shows nothing when every type has a live worker', async () => {
    listJobTypes.mockResolvedValue({ types: [...builtinTypes(), jobType('acme.reverse', { liveWorkers: 1 })] });
    const { client } = renderWithProviders(<OverviewPage />);
    await waitFor(() => expect(client.getQueryState(scopedKey(queryKeys.jobTypes, null))?.status).toBe('success'));
    expect(screen.getByRole('heading', { name: 'Overview' })).toBeInTheDocument();
    expect(screen.queryByTestId('types-without-workers')).toBeNull();
  });
});

describe('<OverviewPage> queue depth', () => {
  it('lists a named queue beside the default one, one row per ready queue', async () => {
    listJobTypes.mockResolvedValue({ types: builtinTypes() });
    const labels = { 1: 'low', 2: 'medium', 3: 'high' } as const;
    const row = (queue: string, namedQueue: string, priority: 1 | 2 | 3, queuedJobs: number, consumers: number) => ({
      queue,
      namedQueue,
      priority,
      label: labels[priority],
      queuedJobs,
      oldestQueuedAt: null,
      oldestAgeSeconds: null,
      brokerReady: queuedJobs,
      consumers,
    });
    vi.mocked(endpoints.listQueues).mockResolvedValue({
      items: [
        row('jobs.ready.high', 'default', 3, 0, 2),
        row('jobs.ready.medium', 'default', 2, 0, 2),
        row('jobs.ready.low', 'default', 1, 0, 2),
        row('jobs.ready.acme.high', 'acme', 3, 0, 0),
        row('jobs.ready.acme.medium', 'acme', 2, 4, 0),
        row('jobs.ready.acme.low', 'acme', 1, 0, 0),
      ],
    });
    renderWithProviders(<OverviewPage />);
    const table = await screen.findByTestId('queue-depth');
    const rows = within(table).getAllByRole('row').slice(1);
    expect(rows).toHaveLength(6);
    const [defaultHigh, , , , acmeMedium] = rows;
    expect(acmeMedium).toHaveTextContent('acme: Medium (2) · no worker');
    expect(defaultHigh).not.toHaveTextContent('no worker');
    expect(acmeMedium).toHaveTextContent('4');
    expect(within(defaultHigh as HTMLElement).getByRole('link')).toHaveAttribute(
      'href',
      '/jobs?status=queued&priority=3',
    );
  });
});

function analytics(countsByStatus: Record<string, number>): JobAnalytics {
  return {
    total: Object.values(countsByStatus).reduce((n, c) => n + c, 0),
    countsByStatus,
    countsByType: {},
    countsByPriority: {},
    successRate: null,
    runtime: { meanMs: null, p95Ms: null },
    throughputLastHour: 0,
  };
}

function liveFigures(running: number, queued: number, workers: LiveFigures['workers']): LiveFigures {
  return {
    at: '2026-12-07T06:00:00Z',
    unfinishedByStatus: { pending: 0, blocked: 0, scheduled: 0, queued, running, failed: 0 },
    workers,
  };
}

describe('<OverviewPage> figures of now', () => {
  beforeEach(() => {
    listJobTypes.mockResolvedValue({ types: [...builtinTypes(), jobType('acme.reverse', { liveWorkers: 0 })] });
    // the rollups' totals lag: 100 queued, nothing running
    vi.mocked(endpoints.getAnalytics).mockResolvedValue(analytics({ queued: 100, succeeded: 5 }));
  });
  afterEach(() => {
    act(() => authStore.getState().logout());
  });

  it('shows the unfinished counts of now over the lagging totals, and the workers for admins', async () => {
    act(() => authStore.getState().login(fakeTokens({ role: 'admin', email: 'admin@test.com' })));
    vi.mocked(endpoints.getLiveFigures).mockResolvedValue(
      liveFigures(70, 30, { live: 2, busySlots: 70, slots: 70 }),
    );
    const { container } = renderWithProviders(<OverviewPage />);
    const now = await screen.findByTestId('now-figures');
    expect(now).toHaveTextContent('Now: 70 running, 30 queued · 2 live workers running 70 jobs of 70 slots.');
    const counts = screen.getByTestId('status-counts');
    expect(within(counts).getByRole('link', { name: 'running: 70 jobs' })).toBeInTheDocument();
    expect(within(counts).getByRole('link', { name: 'queued: 30 jobs' })).toBeInTheDocument();
    expect(within(counts).getByRole('link', { name: 'succeeded: 5 jobs' })).toBeInTheDocument();
    expect(screen.getByTestId('stat-workers')).toHaveTextContent('2');
    // an admin starts workers: the instructions are there
    expect(await screen.findByTestId('types-without-workers')).toHaveTextContent('WORKER_HANDLER_MODULES');
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('gives a user its own counts of now, without the fleet', async () => {
    vi.mocked(endpoints.getLiveFigures).mockResolvedValue(liveFigures(3, 1, null));
    renderWithProviders(<OverviewPage />);
    const now = await screen.findByTestId('now-figures');
    expect(now).toHaveTextContent('Now: 3 running, 1 queued.');
    expect(within(now).queryByRole('link')).toBeNull();
    expect(screen.queryByTestId('stat-workers')).toBeNull();
  });
});
