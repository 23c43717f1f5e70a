import { screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { scopedKey } from '../../project/useScopedQuery';
import { builtinTypes, jobType } from '../../test/jobTypes';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { OverviewPage } from './OverviewPage';

vi.mock('../../api/endpoints', () => ({
  getAnalytics: vi.fn(() => new Promise(() => undefined)),
  getJobSeries: vi.fn(() => new Promise(() => undefined)),
  listQueues: vi.fn(() => new Promise(() => undefined)),
  listDeadLetters: vi.fn(() => new Promise(() => undefined)),
  listWorkers: vi.fn(() => new Promise(() => undefined)),
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
    expect(panel).toHaveTextContent('WORKER_HANDLER_MODULES');
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
    expect(acmeMedium).toHaveTextContent('4');
    expect(within(defaultHigh as HTMLElement).getByRole('link')).toHaveAttribute(
      'href',
      '/jobs?status=queued&priority=3',
    );
  });
});
