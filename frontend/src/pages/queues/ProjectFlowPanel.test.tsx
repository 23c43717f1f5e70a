/** The Queues page's "Project settings": a project's weight and quotas, read by all, changed by admins. */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import type { ProjectFlowChange, ProjectFlowView } from '../../api/types';
import type { OrgRole } from '../../api/types';
import { ALPHA, teamAccess } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { ProjectFlowPanel } from './ProjectFlowPanel';

vi.mock('../../api/endpoints', () => ({
  getProjectFlow: vi.fn(),
  setProjectFlow: vi.fn(),
}));

/** The API's settings of Alpha: GET reads them, PUT changes the fields given. */
let stored: ProjectFlowView;

function serve(overrides: Partial<ProjectFlowView> = {}) {
  stored = {
    projectId: ALPHA,
    weight: 3,
    maxWaiting: 1000,
    maxSubmittedPerDay: null,
    maxRunning: null,
    updatedBy: 'owner@example.com',
    updatedAt: '2030-01-02T10:00:00Z',
    ...overrides,
  };
  vi.mocked(endpoints.getProjectFlow).mockImplementation(() => Promise.resolve({ ...stored }));
  vi.mocked(endpoints.setProjectFlow).mockImplementation((_projectId: string, body: ProjectFlowChange) => {
    stored = { ...stored, ...body, updatedBy: 'user@test.com', updatedAt: '2030-01-03T10:00:00Z' };
    return Promise.resolve({ ...stored });
  });
}

function render(role: OrgRole) {
  return renderWithProviders(<ProjectFlowPanel />, {
    route: `/queues?project=${ALPHA}`,
    access: teamAccess({ role, projectId: ALPHA }),
  });
}

const panel = () => screen.getByTestId('project-flow');
const form = () => screen.getByRole('form', { name: 'Change weight and quotas' });

async function openForm() {
  const user = userEvent.setup();
  await user.click(await screen.findByRole('button', { name: 'Change weight and quotas' }));
  return user;
}

describe('<ProjectFlowPanel>', () => {
  beforeEach(() => {
    vi.clearAllMocks();
    serve();
  });

  it('shows a viewer the weight and quotas read-only, and why they cannot change them', async () => {
    const { container } = render('viewer');
    expect(await screen.findByTestId('project-weight')).toHaveTextContent('3');
    expect(within(panel()).getByRole('heading', { name: 'Project settings' })).toBeInTheDocument();
    expect(panel()).toHaveTextContent('share of the workers when several projects wait');
    expect(screen.getByTestId('project-max-waiting')).toHaveTextContent(/^1[,.\s\u202f]?000$/);
    expect(screen.getByTestId('project-max-submitted-per-day')).toHaveTextContent('none');
    expect(screen.getByTestId('project-flow-changed')).toHaveTextContent(/^by owner@example\.com, .*2030/);
    expect(within(panel()).queryAllByRole('button')).toEqual([]);
    expect(within(panel()).queryByRole('textbox')).toBeNull();
    expect(screen.getByTestId('project-flow-denied')).toHaveTextContent(
      'You are a viewer in Alpha: changing the weight and quotas takes the admin role or above.',
    );
    expect(endpoints.getProjectFlow).toHaveBeenCalledWith(ALPHA, expect.anything());
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('says when the settings were never changed', async () => {
    serve({ weight: 1, maxWaiting: null, updatedBy: null, updatedAt: null });
    render('member');
    expect(await screen.findByTestId('project-flow-changed')).toHaveTextContent('never');
    expect(screen.getByTestId('project-max-waiting')).toHaveTextContent('none');
    expect(screen.getByTestId('project-flow-denied')).toHaveTextContent('You are a member in Alpha');
  });

  it('lets an admin change the weight, sending only that field, and shows the answer', async () => {
    const { container } = render('admin');
    const user = await openForm();
    const open = screen.getByRole('button', { name: 'Change weight and quotas' });
    expect(open).toHaveAttribute('aria-expanded', 'true');
    expect(screen.getByRole('heading', { name: 'Change weight and quotas' })).toHaveFocus();
    expect(within(form()).getByLabelText('Weight')).toHaveValue('3');
    expect(within(form()).getByLabelText('Max waiting jobs')).toHaveValue('1000');
    expect(within(form()).getByLabelText('Max submitted per day')).toHaveValue('');
    expect(await seriousViolations(container)).toEqual([]);

    await user.clear(within(form()).getByLabelText('Weight'));
    await user.type(within(form()).getByLabelText('Weight'), '5');
    await user.click(within(form()).getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(endpoints.setProjectFlow).toHaveBeenCalledTimes(1));
    expect(endpoints.setProjectFlow).toHaveBeenCalledWith(ALPHA, { weight: 5 });
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Change weight and quotas' })).toBeNull());
    expect(open).toHaveFocus(); // back where the form was opened
    expect(open).toHaveAttribute('aria-expanded', 'false');
    expect(screen.getByTestId('project-weight')).toHaveTextContent('5');
    expect(screen.getByTestId('project-flow-changed')).toHaveTextContent('by user@test.com');
  });

  it('sends null for an emptied quota, and a new quota as a number', async () => {
    render('owner');
    const user = await openForm();
    await user.clear(within(form()).getByLabelText('Max waiting jobs'));
    await user.type(within(form()).getByLabelText('Max submitted per day'), '50000');
    await user.type(within(form()).getByLabelText('Max running jobs'), '8');
    await user.click(within(form()).getByRole('button', { name: 'Save settings' }));
    await waitFor(() =>
      expect(endpoints.setProjectFlow).toHaveBeenCalledWith(ALPHA, { maxWaiting: null, maxSubmittedPerDay: 50000, maxRunning: 8 }),
    );
    await waitFor(() => expect(screen.getByTestId('project-max-waiting')).toHaveTextContent('none'));
    expect(screen.getByTestId('project-max-submitted-per-day')).toHaveTextContent(/^50[,.\s\u202f]?000$/);
    expect(screen.getByTestId('project-max-running')).toHaveTextContent('8');
  });

  it("shows the API's 422 details on their fields", async () => {
    vi.mocked(endpoints.setProjectFlow).mockRejectedValue(
      new ApiError(422, 'validation_error', 'request validation failed', [
        { field: 'maxWaiting', message: 'Input should be less than or equal to 2147483647' },
      ]),
    );
    render('admin');
    const user = await openForm();
    await user.clear(within(form()).getByLabelText('Max waiting jobs'));
    await user.type(within(form()).getByLabelText('Max waiting jobs'), '2000');
    await user.click(within(form()).getByRole('button', { name: 'Save settings' }));
    expect(endpoints.setProjectFlow).toHaveBeenCalledWith(ALPHA, { maxWaiting: 2000 });
    expect(await within(form()).findByTestId('error-flow.maxWaiting')).toHaveTextContent('less than or equal to 2147483647');
    expect(within(form()).getByLabelText('Max waiting jobs')).toHaveAttribute('aria-invalid', 'true');
    const summary = within(form()).getByTestId('error-summary');
    expect(summary).toHaveFocus();
    expect(summary).toHaveTextContent('Max waiting jobs: Input should be less than or equal to 2147483647');
    expect(summary).not.toHaveTextContent('request validation failed');
    // the form stays open with what was typed; nothing changed
    expect(within(form()).getByLabelText('Max waiting jobs')).toHaveValue('2000');
    expect(screen.getByTestId('project-max-waiting')).toHaveTextContent(/^1[,.\s\u202f]?000$/);
  });

  it("shows a refusal's message (a role changed meanwhile: 403)", async () => {
    vi.mocked(endpoints.setProjectFlow).mockRejectedValue(
      new ApiError(403, 'forbidden', 'changing the flow settings takes the admin role (yours: viewer)'),
    );
    render('admin');
    const user = await openForm();
    await user.type(within(form()).getByLabelText('Max submitted per day'), '10');
    await user.click(within(form()).getByRole('button', { name: 'Save settings' }));
    expect(await within(form()).findByTestId('error-summary')).toHaveTextContent('takes the admin role (yours: viewer)');
  });

  it('checks the numbers as the API does before sending', async () => {
    render('admin');
    const user = await openForm();
    const weight = within(form()).getByLabelText('Weight');
    await user.clear(weight);
    await user.type(weight, '101');
    await user.type(within(form()).getByLabelText('Max submitted per day'), '0');
    await user.clear(within(form()).getByLabelText('Max waiting jobs'));
    await user.type(within(form()).getByLabelText('Max waiting jobs'), '2.5');
    await user.click(within(form()).getByRole('button', { name: 'Save settings' }));
    expect(await within(form()).findByTestId('error-flow.weight')).toHaveTextContent('A whole number, 1 to 100');
    expect(within(form()).getByTestId('error-flow.maxWaiting')).toHaveTextContent('A whole number, 1 to 2,147,483,647');
    expect(within(form()).getByTestId('error-flow.maxSubmittedPerDay')).toHaveTextContent('A whole number, 1 to');
    expect(weight).toHaveAttribute('aria-invalid', 'true');

    await user.clear(weight);
    await user.click(within(form()).getByRole('button', { name: 'Save settings' }));
    expect(await within(form()).findByTestId('error-flow.weight')).toHaveTextContent('Required');
    expect(endpoints.setProjectFlow).not.toHaveBeenCalled();
  });

  it('sends nothing when nothing changed, and closes on Cancel', async () => {
    render('admin');
    const user = await openForm();
    await user.click(within(form()).getByRole('button', { name: 'Save settings' }));
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Change weight and quotas' })).toBeNull());
    await user.click(screen.getByRole('button', { name: 'Change weight and quotas' }));
    await user.click(within(form()).getByRole('button', { name: 'Cancel' }));
    expect(screen.queryByRole('form', { name: 'Change weight and quotas' })).toBeNull();
    expect(endpoints.setProjectFlow).not.toHaveBeenCalled();
  });

  it('asks for a project when all projects are shown', () => {
    renderWithProviders(<ProjectFlowPanel />, { route: '/queues', access: teamAccess({ role: 'admin' }) });
    expect(screen.getByTestId('project-flow-choose')).toHaveTextContent('choose one');
    expect(endpoints.getProjectFlow).not.toHaveBeenCalled();
  });
});
