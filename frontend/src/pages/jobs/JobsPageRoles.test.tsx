/** The jobs list's bulk actions and links by role, per chosen project or per row (docs/tenancy.md). */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import { jobSummary, jobsPage } from '../../test/jobs';
import { builtinTypes } from '../../test/jobTypes';
import { ALPHA, PERSONAL_PROJECT, teamAccess } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { JobsPage } from './JobsPage';

vi.mock('../../api/endpoints', () => ({
  listJobs: vi.fn(),
  cancelJob: vi.fn(() => Promise.resolve({ jobId: 'x', status: 'cancelled' })),
  retryJob: vi.fn(),
  listJobTypes: vi.fn(),
}));

const listJobs = vi.mocked(endpoints.listJobs);
const cancelJob = vi.mocked(endpoints.cancelJob);
const IN_ALPHA = 'aaaaaaaa-0000-4000-8000-000000000001';
const MINE = 'bbbbbbbb-0000-4000-8000-000000000002';

describe('<JobsPage> by role', () => {
  beforeEach(() => {
    listJobs.mockReset();
    cancelJob.mockClear();
    vi.mocked(endpoints.listJobTypes).mockResolvedValue({ types: builtinTypes() });
    listJobs.mockResolvedValue(
      jobsPage([
        jobSummary(IN_ALPHA, 'running', { projectId: ALPHA }),
        jobSummary(MINE, 'running', { projectId: PERSONAL_PROJECT }),
      ]),
    );
  });

  it('shows a viewer of the chosen project its jobs without selection, bulk actions or a submit link', async () => {
    listJobs.mockResolvedValue(jobsPage([jobSummary(IN_ALPHA, 'running', { projectId: ALPHA })]));
    const { container } = renderWithProviders(<JobsPage />, {
      route: `/jobs?project=${ALPHA}`,
      access: teamAccess({ role: 'viewer', projectId: ALPHA }),
    });
    expect(await screen.findByTestId('job-row')).toHaveAttribute('data-job-id', IN_ALPHA);
    expect(screen.queryByRole('checkbox', { name: /Select/ })).toBeNull();
    expect(screen.queryByTestId('bulk-actions')).toBeNull();
    expect(screen.getByTestId('bulk-actions-denied')).toHaveTextContent('You are a viewer in Alpha');
    expect(screen.queryByRole('link', { name: 'Submit a job' })).toBeNull();
    // the job links keep the project
    expect(screen.getByRole('link', { name: `Job ${IN_ALPHA}` })).toHaveAttribute('href', `/jobs/${IN_ALPHA}?project=${ALPHA}`);
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('with all projects chosen, names each row’s project and acts only where the role allows', async () => {
    const user = userEvent.setup();
    renderWithProviders(<JobsPage />, { route: '/jobs', access: teamAccess({ role: 'viewer' }) });
    await waitFor(() => expect(screen.getAllByTestId('job-row')).toHaveLength(2));
    const rows = screen.getAllByTestId('job-row');
    expect(within(rows[0]!).getByText('Alpha')).toBeInTheDocument();
    expect(within(rows[1]!).getByText('Default')).toBeInTheDocument();
    expect(screen.getByRole('link', { name: 'Submit a job' })).toHaveAttribute('href', '/submit');

    await user.click(screen.getByRole('checkbox', { name: 'Select all jobs on this page' }));
    const bulk = screen.getByTestId('bulk-actions');
    expect(bulk).toHaveTextContent('2 selected, 1 in projects where your role may not act on jobs (left out)');
    await user.click(within(bulk).getByRole('button', { name: 'Cancel selected (1)' }));
    await waitFor(() => expect(cancelJob).toHaveBeenCalledTimes(1));
    expect(cancelJob).toHaveBeenCalledWith(MINE);
  });
});
