/** Schedules by role: members look, admins create, pause, resume and delete (docs/tenancy.md). */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import type { ScheduleView } from '../../api/types';
import { builtinTypes } from '../../test/jobTypes';
import { ALPHA, PERSONAL_PROJECT, page, teamAccess } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { SchedulesPage } from './SchedulesPage';

vi.mock('../../api/endpoints', () => ({
  listSchedules: vi.fn(),
  getSchedule: vi.fn(),
  createSchedule: vi.fn(),
  pauseSchedule: vi.fn(),
  resumeSchedule: vi.fn(),
  deleteSchedule: vi.fn(),
  editSchedule: vi.fn(),
  runSchedule: vi.fn(),
  listJobTypes: vi.fn(() => Promise.resolve({ types: builtinTypes() })),
  listRetryPolicies: vi.fn(() => Promise.resolve({ items: [] })),
}));

function schedule(name: string, projectId: string): ScheduleView {
  return {
    id: `id-${name}`,
    name,
    cron: '0 3 * * *',
    timezone: 'UTC',
    jobTemplate: { type: 'simulate', priority: 2, payload: {} },
    paused: false,
    owner: 'user@test.com',
    projectId,
    nextFireAt: '2030-01-02T03:00:00Z',
    lastFireAt: null,
    lastJobId: null,
    createdAt: '2030-01-01T00:00:00Z',
    updatedAt: '2030-01-01T00:00:00Z',
    declaredIn: null,
    declaredAt: null,
  };
}

const row = (name: string) =>
  screen.getAllByTestId('schedule-row').find((r) => r.dataset.scheduleName === name)!;

describe('<SchedulesPage> by role', () => {
  beforeEach(() => {
    vi.mocked(endpoints.listSchedules).mockResolvedValue(
      page([schedule('alpha-nightly', ALPHA), schedule('my-nightly', PERSONAL_PROJECT)]),
    );
  });

  it('shows a member of the chosen project its schedules, but no pause, delete or create, and why', async () => {
    vi.mocked(endpoints.listSchedules).mockResolvedValue(page([schedule('alpha-nightly', ALPHA)]));
    const { container } = renderWithProviders(<SchedulesPage />, {
      route: `/schedules?project=${ALPHA}`,
      access: teamAccess({ role: 'member', projectId: ALPHA }),
    });
    await waitFor(() => expect(screen.getAllByTestId('schedule-row')).toHaveLength(1));
    const alpha = row('alpha-nightly');
    expect(within(alpha).queryByRole('button', { name: 'Pause schedule alpha-nightly' })).toBeNull();
    expect(within(alpha).queryByRole('button', { name: 'Delete' })).toBeNull();
    expect(within(alpha).getByRole('button', { name: 'Fire history of alpha-nightly' })).toBeInTheDocument();
    expect(within(alpha).getByTestId('schedule-view-only')).toHaveTextContent('View only: admins edit, run, pause and delete (your role: Member)');
    expect(screen.queryByRole('form', { name: 'Create a schedule' })).toBeNull();
    expect(screen.getByTestId('schedule-create-denied')).toHaveTextContent(
      'You are a member in Alpha: creating schedules takes the admin role or above.',
    );
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('lets an admin of the chosen project manage them and create one there', async () => {
    vi.mocked(endpoints.listSchedules).mockResolvedValue(page([schedule('alpha-nightly', ALPHA)]));
    renderWithProviders(<SchedulesPage />, {
      route: `/schedules?project=${ALPHA}`,
      access: teamAccess({ role: 'admin', projectId: ALPHA }),
    });
    await waitFor(() => expect(screen.getAllByTestId('schedule-row')).toHaveLength(1));
    expect(within(row('alpha-nightly')).getByRole('button', { name: 'Pause schedule alpha-nightly' })).toBeEnabled();
    expect(within(row('alpha-nightly')).getByRole('button', { name: 'Delete' })).toBeEnabled();
    expect(screen.getByTestId('schedule-target')).toHaveTextContent('Creating in Alpha (Acme Corp).');
    expect(screen.getByRole('form', { name: 'Create a schedule' })).toBeInTheDocument();
  });

  it('marks a schedule declared in code with its module, and only that one', async () => {
    const declared = { ...schedule('nightly-report', PERSONAL_PROJECT), owner: 'code', declaredIn: 'acme_jobs.reports', declaredAt: '2030-01-01T00:00:00Z' };
    vi.mocked(endpoints.listSchedules).mockResolvedValue(page([declared, schedule('my-nightly', PERSONAL_PROJECT)]));
    const { container } = renderWithProviders(<SchedulesPage />, { route: '/schedules', access: teamAccess({ role: 'member' }) });
    await waitFor(() => expect(screen.getAllByTestId('schedule-row')).toHaveLength(2));
    expect(within(row('nightly-report')).getByTestId('schedule-declared')).toHaveTextContent('Declared in code: acme_jobs.reports');
    expect(within(row('nightly-report')).getByRole('rowheader')).toHaveTextContent(/^nightly-reportDeclared in code/);
    expect(within(row('my-nightly')).queryByTestId('schedule-declared')).toBeNull();
    expect(await seriousViolations(container)).toEqual([]);
  });

  it("with all projects chosen, each row's project decides; new ones go to the personal project", async () => {
    renderWithProviders(<SchedulesPage />, { route: '/schedules', access: teamAccess({ role: 'member' }) });
    await waitFor(() => expect(screen.getAllByTestId('schedule-row')).toHaveLength(2));
    expect(within(row('alpha-nightly')).queryByRole('button', { name: 'Pause schedule alpha-nightly' })).toBeNull();
    expect(within(row('my-nightly')).getByRole('button', { name: 'Pause schedule my-nightly' })).toBeEnabled();
    expect(screen.getByTestId('schedule-target')).toHaveTextContent('Creating in Default');
  });

  it('lets an admin run a schedule now, once per click, and edit it in place of the create form', async () => {
    const nightly = { ...schedule('my-nightly', PERSONAL_PROJECT), jobTemplate: { type: 'simulate', priority: 2, payload: { minSeconds: 1, maxSeconds: 2 } } };
    vi.mocked(endpoints.listSchedules).mockResolvedValue(page([nightly]));
    vi.mocked(endpoints.getSchedule).mockResolvedValue({ ...nightly, fires: [] });
    vi.mocked(endpoints.runSchedule).mockResolvedValue({ scheduleId: nightly.id, jobId: '12345678-0000-4000-8000-000000000000', fireTime: '2030-01-01T00:00:00Z', replayed: false });
    vi.mocked(endpoints.editSchedule).mockResolvedValue({ ...nightly, cron: '15 4 * * *' });
    renderWithProviders(<SchedulesPage />, { route: '/schedules', access: teamAccess({ role: 'member' }) });
    const user = userEvent.setup();
    await waitFor(() => expect(screen.getAllByTestId('schedule-row')).toHaveLength(1));

    await user.click(within(row('my-nightly')).getByRole('button', { name: 'Run now: schedule my-nightly' }));
    await waitFor(() => expect(endpoints.runSchedule).toHaveBeenCalledTimes(1));
    await waitFor(() => expect(within(row('my-nightly')).getByRole('button', { name: 'Run now: schedule my-nightly' })).toBeEnabled());
    await user.click(within(row('my-nightly')).getByRole('button', { name: 'Run now: schedule my-nightly' }));
    await waitFor(() => expect(endpoints.runSchedule).toHaveBeenCalledTimes(2));
    const [first, second] = vi.mocked(endpoints.runSchedule).mock.calls;
    expect(first?.[0]).toBe(nightly.id);
    expect(first?.[1]).not.toEqual(second?.[1]); // a new run, a new key; a retried request keeps its key

    await user.click(within(row('my-nightly')).getByRole('button', { name: 'Edit schedule my-nightly' }));
    const form = await screen.findByRole('form', { name: 'Edit schedule my-nightly' });
    expect(screen.queryByRole('form', { name: 'Create a schedule' })).toBeNull();
    const cron = within(form).getByLabelText('Cron expression');
    expect(cron).toHaveValue('0 3 * * *');
    expect(await within(form).findByRole('textbox', { name: 'Min seconds' })).toHaveValue('1');
    await user.clear(cron);
    await user.type(cron, '15 4 * * *');
    await user.click(within(form).getByRole('button', { name: 'Save changes' }));
    await waitFor(() => expect(endpoints.editSchedule).toHaveBeenCalledTimes(1));
    const [id, body] = vi.mocked(endpoints.editSchedule).mock.calls[0] ?? [];
    expect(id).toBe(nightly.id);
    expect(body).toMatchObject({ cron: '15 4 * * *', timezone: 'UTC', jobTemplate: { type: 'simulate', priority: 2, payload: { minSeconds: 1, maxSeconds: 2 } } });
    expect(body).not.toHaveProperty('name');
    expect(await screen.findByRole('form', { name: 'Create a schedule' })).toBeInTheDocument();
  });

  it('offers no edit of a schedule declared in code, and says where to change it', async () => {
    const declared = { ...schedule('nightly-report', PERSONAL_PROJECT), owner: 'code', declaredIn: 'acme_jobs.reports' };
    vi.mocked(endpoints.listSchedules).mockResolvedValue(page([declared]));
    renderWithProviders(<SchedulesPage />, { route: '/schedules', access: teamAccess({ role: 'member' }) });
    await waitFor(() => expect(screen.getAllByTestId('schedule-row')).toHaveLength(1));
    expect(within(row('nightly-report')).queryByRole('button', { name: 'Edit schedule nightly-report' })).toBeNull();
    expect(within(row('nightly-report')).getByTestId('schedule-edit-in-code')).toHaveTextContent('undone at the next deploy');
    expect(within(row('nightly-report')).getByRole('button', { name: 'Run now: schedule nightly-report' })).toBeEnabled();
  });
});
