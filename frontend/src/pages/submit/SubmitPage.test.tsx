/** Where a submission goes, and who may submit there (docs/tenancy.md: a viewer may not). */
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import { chooseType } from '../../test/forms';
import { builtinTypes } from '../../test/jobTypes';
import { ALPHA, ME, teamAccess } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { SubmitPage } from './SubmitPage';

vi.mock('../../api/endpoints', () => ({
  submitJob: vi.fn(),
  submitBatch: vi.fn(),
  listJobTypes: vi.fn(() => Promise.resolve({ types: builtinTypes() })),
  listRetryPolicies: vi.fn(() => Promise.resolve({ items: [] })),
  getJob: vi.fn(() => new Promise(() => undefined)),
}));

const submitJob = vi.mocked(endpoints.submitJob);

describe('<SubmitPage> and the project', () => {
  beforeEach(() => {
    submitJob.mockReset();
  });

  it('shows a viewer of the chosen project no form, and why', async () => {
    const { container } = renderWithProviders(<SubmitPage />, {
      route: `/submit?project=${ALPHA}`,
      access: teamAccess({ role: 'viewer', projectId: ALPHA }),
    });
    expect(screen.getByTestId('submit-target')).toHaveTextContent('Submitting to Alpha (Acme Corp).');
    expect(screen.getByTestId('submit-denied')).toHaveTextContent(
      'You are a viewer in Alpha: submitting jobs and batches takes the member role or above.',
    );
    expect(screen.queryByRole('button', { name: 'Submit job' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Submit a job' })).toBeNull();
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('nor a batch form', () => {
    renderWithProviders(<SubmitPage />, {
      route: `/submit?mode=batch&project=${ALPHA}`,
      access: teamAccess({ role: 'viewer', projectId: ALPHA }),
    });
    expect(screen.queryByRole('button', { name: 'Submit batch' })).toBeNull();
    expect(screen.getByTestId('submit-denied')).toBeInTheDocument();
  });

  it('lets a member submit to the chosen project', async () => {
    renderWithProviders(<SubmitPage />, {
      route: `/submit?project=${ALPHA}`,
      access: teamAccess({ role: 'member', projectId: ALPHA }),
    });
    expect(screen.getByTestId('submit-target')).toHaveTextContent('Submitting to Alpha (Acme Corp).');
    expect(await screen.findByRole('button', { name: 'Submit job' })).toBeEnabled();
    expect(screen.queryByTestId('submit-denied')).toBeNull();
  });

  it('submits to the personal default project while all projects are chosen, even for a viewer elsewhere', async () => {
    renderWithProviders(<SubmitPage />, { route: '/submit', access: teamAccess({ role: 'viewer' }) });
    expect(screen.getByTestId('submit-target')).toHaveTextContent(
      `Submitting to Default (${ME}), your personal default project. Choose a project above to submit to another.`,
    );
    expect(await screen.findByRole('button', { name: 'Submit job' })).toBeEnabled();
  });

  it("shows the API's 403 message when it still refuses", async () => {
    const user = userEvent.setup();
    submitJob.mockRejectedValue(new ApiError(403, 'forbidden', 'a viewer may not submit jobs in this project', []));
    renderWithProviders(<SubmitPage />, {
      route: `/submit?project=${ALPHA}`,
      access: teamAccess({ role: 'member', projectId: ALPHA }),
    });
    await chooseType('simulate');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(await screen.findByTestId('error-summary')).toHaveTextContent('a viewer may not submit jobs in this project');
  });
});
