/** A batch's page: who and when, its jobs by state and listed, and the retry of its dead jobs by role. */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import type { BatchView, JobSummary } from '../../api/types';
import { ALPHA, page, teamAccess } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { BatchDetailPage } from './BatchDetailPage';

vi.mock('../../api/endpoints', () => ({
  getBatch: vi.fn(),
  getBatchStatus: vi.fn(),
  listJobs: vi.fn(),
  retryFailedBatch: vi.fn(),
}));

const BATCH = '1a2b3c4d-0000-4000-8000-000000000001';
const counts = { pending: 0, blocked: 0, scheduled: 0, queued: 0, running: 0, failed: 0, succeeded: 1, dead: 2, cancelled: 0 };
const view: BatchView = {
  batchId: BATCH,
  submittedBy: 'bob@acme.test',
  projectId: ALPHA,
  total: 4,
  counts,
  succeeded: 1,
  failed: 2,
  dead: 2,
  cancelled: 0,
  recorded: 3,
  finished: false,
  createdAt: '2030-01-01T00:00:00Z',
};

function job(n: number, status: JobSummary['status']): JobSummary {
  return {
    jobId: `0000000${n}-0000-4000-8000-000000000000`,
    type: 'simulate',
    status,
    attempt: 3,
    maxAttempts: 3,
    createdAt: '2030-01-01T00:00:01Z',
    lastError: status === 'dead' ? 'boom' : null,
    batchId: BATCH,
  } as JobSummary;
}

function render(role: 'member' | 'viewer') {
  return renderWithProviders(<BatchDetailPage />, {
    route: `/batches/${BATCH}?project=${ALPHA}`,
    path: '/batches/:batchId',
    access: teamAccess({ role, projectId: ALPHA }),
  });
}

describe('<BatchDetailPage>', () => {
  beforeEach(() => {
    vi.mocked(endpoints.getBatch).mockResolvedValue(view);
    vi.mocked(endpoints.getBatchStatus).mockResolvedValue({
      batchId: BATCH,
      name: 'invoices',
      size: 4,
      jobIds: [],
      published: 4,
      createdAt: view.createdAt,
      projectId: ALPHA,
    });
    vi.mocked(endpoints.listJobs).mockResolvedValue({ ...page([job(1, 'succeeded'), job(2, 'dead'), job(3, 'dead')]), totalCapped: false });
    vi.mocked(endpoints.retryFailedBatch).mockReset();
  });

  it('shows the owner, the states, the jobs and why one is not recorded; a member retries the dead ones', async () => {
    vi.mocked(endpoints.retryFailedBatch).mockResolvedValue({ batchId: BATCH, jobIds: [job(2, 'dead').jobId, job(3, 'dead').jobId], status: 'retry_requested' });
    const { container } = render('member');
    expect(await screen.findByTestId('batch-facts')).toHaveTextContent('bob@acme.test');
    const states = screen.getByTestId('batch-states-table');
    expect(within(states).getAllByRole('row').find((r) => /^✕dead/.test(r.textContent))).toHaveTextContent(/^✕dead2$/);
    await waitFor(() => expect(within(screen.getByTestId('batch-jobs')).getAllByRole('row')).toHaveLength(4));
    expect(vi.mocked(endpoints.listJobs).mock.calls[0]?.[0]).toMatchObject({ batchId: BATCH });
    expect(await screen.findByTestId('batch-shortfall')).toHaveTextContent('1 job published and on their way to the scheduler');
    expect(await seriousViolations(container)).toEqual([]);

    const user = userEvent.setup();
    await user.click(screen.getByRole('button', { name: 'Retry 2 dead jobs' }));
    await user.click(screen.getByRole('button', { name: 'Yes, retry them' }));
    await waitFor(() => expect(endpoints.retryFailedBatch).toHaveBeenCalledWith(BATCH));
  });

  it('tells a viewer why it cannot retry them', async () => {
    render('viewer');
    expect(await screen.findByTestId('batch-retry-denied')).toHaveTextContent('retrying jobs takes the member role or above');
    expect(screen.queryByRole('button', { name: /Retry/ })).toBeNull();
  });
});
