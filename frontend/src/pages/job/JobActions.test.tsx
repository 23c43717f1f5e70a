/** A job's retry and cancel follow the role in the job's project (docs/tenancy.md, "Roles"). */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import { useNotices } from '../../lib/notices';
import { jobDetail } from '../../test/jobs';
import { ALPHA, PERSONAL_PROJECT, teamAccess } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { JobDetailPage } from './JobDetailPage';

vi.mock('../../api/endpoints', () => ({
  getJobSnapshot: vi.fn(),
  getJobLogs: vi.fn(() => Promise.resolve({ items: [], nextAfterId: 0 })),
  cancelJob: vi.fn(),
  retryJob: vi.fn(),
}));

const getJobSnapshot = vi.mocked(endpoints.getJobSnapshot);
const retryJob = vi.mocked(endpoints.retryJob);
const JOB = 'aaaaaaaa-0000-4000-8000-000000000001';

function renderJob(route: string, access = teamAccess({ role: 'viewer' })) {
  return renderWithProviders(<JobDetailPage />, { route, path: '/jobs/:jobId', access });
}

describe('<JobDetailPage> actions by role', () => {
  beforeEach(() => {
    getJobSnapshot.mockReset();
    retryJob.mockReset();
    useNotices.setState({ notices: [] });
  });

  it('shows a viewer the job of their project but no retry or cancel, and why', async () => {
    getJobSnapshot.mockResolvedValue({ state: 'recorded', job: jobDetail(JOB, 'running', { projectId: ALPHA }) });
    const { container } = renderJob(`/jobs/${JOB}?project=${ALPHA}`, teamAccess({ role: 'viewer', projectId: ALPHA }));
    expect(await screen.findByTestId('job-status')).toHaveAttribute('data-status', 'running');
    expect(screen.getByTestId('job-project')).toHaveTextContent('Alpha · Acme Corp');
    expect(screen.queryByRole('button', { name: 'Cancel job' })).toBeNull();
    expect(screen.queryByRole('group', { name: 'Job actions' })).toBeNull();
    expect(screen.getByTestId('job-actions-denied')).toHaveTextContent(
      'You are a viewer in Alpha: retrying or cancelling its jobs takes the member role or above.',
    );
    expect(await seriousViolations(container)).toEqual([]);
  });

  it("with all projects chosen, the job's own project decides", async () => {
    getJobSnapshot.mockResolvedValue({ state: 'recorded', job: jobDetail(JOB, 'dead', { projectId: ALPHA }) });
    renderJob(`/jobs/${JOB}`);
    expect(await screen.findByTestId('job-status')).toHaveAttribute('data-status', 'dead');
    expect(screen.queryByRole('button', { name: 'Retry job' })).toBeNull();
    expect(screen.getByTestId('job-actions-denied')).toBeInTheDocument();
  });

  it('lets the owner of the personal project retry and cancel', async () => {
    getJobSnapshot.mockResolvedValue({ state: 'recorded', job: jobDetail(JOB, 'dead', { projectId: PERSONAL_PROJECT }) });
    renderJob(`/jobs/${JOB}`);
    expect(await screen.findByRole('button', { name: 'Retry job' })).toBeEnabled();
    expect(screen.queryByTestId('job-actions-denied')).toBeNull();
  });

  it('lets a member act; a 403 the API still answers shows its message', async () => {
    const user = userEvent.setup();
    getJobSnapshot.mockResolvedValue({ state: 'recorded', job: jobDetail(JOB, 'dead', { projectId: ALPHA }) });
    retryJob.mockRejectedValue(new ApiError(403, 'forbidden', 'a viewer may not retry jobs in this project'));
    renderJob(`/jobs/${JOB}?project=${ALPHA}`, teamAccess({ role: 'member', projectId: ALPHA }));
    const actions = await screen.findByRole('group', { name: 'Job actions' });
    await user.click(within(actions).getByRole('button', { name: 'Retry job' }));
    await waitFor(() =>
      expect(useNotices.getState().notices.at(-1)).toMatchObject({
        text: 'Retry failed: a viewer may not retry jobs in this project',
        tone: 'error',
      }),
    );
  });
});
