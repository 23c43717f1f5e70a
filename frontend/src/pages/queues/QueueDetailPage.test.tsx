import { screen, within } from '@testing-library/react';
import { describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import type { QueueView } from '../../api/types';
import { ALPHA } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { QueueDetailPage } from './QueueDetailPage';

vi.mock('../../api/endpoints', () => ({
  getQueue: vi.fn(),
  getCharts: vi.fn(() => new Promise(() => undefined)),
}));

const emails: QueueView = {
  id: 'q-emails',
  projectId: ALPHA,
  name: 'emails',
  maxConcurrency: 4,
  rateLimit: null,
  concurrencyKey: null,
  paused: false,
  pausedAt: null,
  pausedBy: null,
  defaultPriority: null,
  defaultTimeoutSeconds: null,
  defaultRetryPolicy: null,
  createdBy: 'owner@example.com',
  createdAt: '2030-01-01T00:00:00Z',
  updatedAt: '2030-01-01T00:00:00Z',
  waiting: 7,
  running: 3,
  oldestQueuedAt: '2030-01-01T00:00:00Z',
  oldestAgeSeconds: 90,
  depth: [{ status: 'queued', priority: 3, count: 7 }],
};

describe('<QueueDetailPage>', () => {
  it('shows the queue’s figures now and asks for its own charts', async () => {
    vi.mocked(endpoints.getQueue).mockResolvedValue(emails);
    const { container } = renderWithProviders(<QueueDetailPage />, { route: '/queues/q-emails', path: '/queues/:queueId' });
    expect(await screen.findByRole('heading', { level: 1, name: 'Queue emails' })).toBeInTheDocument();
    const figures = screen.getByTestId('queue-figures');
    expect(within(figures).getByTestId('queue-waiting-now')).toHaveTextContent('7');
    expect(within(figures).getByTestId('queue-running-now')).toHaveTextContent('3');
    expect(screen.getByRole('heading', { level: 2, name: 'Charts of emails' })).toBeInTheDocument();
    expect(endpoints.getQueue).toHaveBeenCalledWith('q-emails', expect.anything());
    expect(endpoints.getCharts).toHaveBeenCalledWith('1h', 'q-emails', expect.anything());
    expect(screen.getByRole('link', { name: 'All queues' })).toHaveAttribute('href', '/queues');
    expect(await seriousViolations(container)).toEqual([]);
  });
});
