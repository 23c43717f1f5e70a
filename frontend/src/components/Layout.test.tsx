/** The project switcher in the layout: what it lists, the URL it writes, an unknown project. */
import { QueryClientProvider } from '@tanstack/react-query';
import { act, render, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/client';
import * as endpoints from '../api/endpoints';
import { authStore } from '../api/instance';
import { useRights } from '../project/access';
import { useProjectId } from '../project/navigation';
import { ALPHA, BETA, ME, page, project, TEAM_ORG, teamOrganizations, teamProjects } from '../test/tenancy';
import { fakeTokens, LocationProbe, seriousViolations, testQueryClient } from '../test/utils';
import { Layout } from './Layout';

vi.mock('../api/endpoints', () => ({
  listOrganizations: vi.fn(),
  listProjects: vi.fn(),
  getProject: vi.fn(),
  getOrganization: vi.fn(),
}));

const api = vi.mocked(endpoints);

/** A page under the layout: the project it follows and what the user may do there. */
function JobsProbe() {
  const rights = useRights();
  return (
    <>
      <h1>Jobs</h1>
      <output data-testid="followed">{useProjectId() ?? 'all'}</output>
      <output data-testid="may-submit">{String(rights.submit)}</output>
    </>
  );
}

function renderLayout(route: string) {
  return render(
    <QueryClientProvider client={testQueryClient()}>
      <MemoryRouter initialEntries={[route]}>
        <Routes>
          <Route element={<Layout />}>
            <Route path="jobs" element={<JobsProbe />} />
            <Route path="jobs/:jobId" element={<h1>A job</h1>} />
          </Route>
        </Routes>
        <LocationProbe />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

const switcher = () => screen.getByRole('combobox', { name: 'Project' });
const location = () => screen.getByTestId('location').textContent;

describe('the project switcher', () => {
  beforeEach(() => {
    for (const fn of Object.values(api)) fn.mockReset();
    act(() => authStore.getState().login(fakeTokens({ email: ME })));
    api.listOrganizations.mockResolvedValue(page(teamOrganizations('viewer')));
    api.listProjects.mockResolvedValue(page(teamProjects()));
  });
  afterEach(() => act(() => authStore.getState().logout()));

  it('lists all projects, then every project grouped by organization, and puts the choice in the URL', async () => {
    const user = userEvent.setup();
    const { container } = renderLayout('/jobs?status=dead&page=3');
    expect(await screen.findByRole('heading', { name: 'Jobs' })).toBeInTheDocument();
    expect(switcher()).toHaveValue('');
    const options = within(switcher()).getAllByRole('option').map((o) => o.textContent);
    expect(options).toEqual(['All projects', 'Alpha', 'Beta', 'Default']);
    const groups = [...switcher().querySelectorAll('optgroup')].map((g) => g.label);
    expect(groups).toEqual(['Acme Corp', ME]);
    // all projects: submissions go to the personal default project, where the user is owner
    expect(screen.getByTestId('may-submit')).toHaveTextContent('true');
    expect(await seriousViolations(container)).toEqual([]);

    await user.selectOptions(switcher(), 'Alpha');
    expect(location()).toBe(`/jobs?status=dead&project=${ALPHA}`);
    expect(screen.getByTestId('followed')).toHaveTextContent(ALPHA);
    expect(screen.getByTestId('project-role')).toHaveTextContent('Your role: Viewer');
    expect(screen.getByTestId('may-submit')).toHaveTextContent('false');
    // nav links keep it
    const nav = screen.getByRole('navigation', { name: 'Main' });
    expect(within(nav).getByRole('link', { name: 'Dead letters' })).toHaveAttribute('href', `/dead-letters?project=${ALPHA}`);

    await user.selectOptions(switcher(), 'All projects');
    expect(location()).toBe('/jobs?status=dead');
    // the organization and project lists are read once, at most 100 a page
    expect(api.listProjects).toHaveBeenCalledWith({ pageNumber: 1, pageSize: 100 }, expect.anything());
    expect(api.listOrganizations).toHaveBeenCalledTimes(1);
  });

  it('opens the project a link names, and leaves a job page for the list when switching', async () => {
    const user = userEvent.setup();
    renderLayout(`/jobs/abc?project=${ALPHA}`);
    expect(await screen.findByRole('heading', { name: 'A job' })).toBeInTheDocument();
    expect(switcher()).toHaveValue(ALPHA);
    await user.selectOptions(switcher(), 'Beta');
    expect(location()).toBe(`/jobs?project=${BETA}`);
  });

  it('reads every page of a long list', async () => {
    const many = Array.from({ length: 150 }, (_, i) => project({ id: `p-${i}`, orgId: TEAM_ORG, name: `P ${String(i).padStart(3, '0')}` }));
    api.listProjects.mockImplementation(({ pageNumber = 1 }) =>
      Promise.resolve({ items: many.slice((pageNumber - 1) * 100, pageNumber * 100), pageNumber, pageSize: 100, totalItems: 150, totalPages: 2 }),
    );
    renderLayout('/jobs');
    await screen.findByRole('heading', { name: 'Jobs' });
    expect(within(switcher()).getAllByRole('option')).toHaveLength(151);
    expect(api.listProjects).toHaveBeenCalledWith({ pageNumber: 2, pageSize: 100 }, expect.anything());
  });

  it('says so when the URL names a project the user does not see, with the way back to all projects', async () => {
    const user = userEvent.setup();
    api.getProject.mockRejectedValue(new ApiError(404, 'not_found', 'project not found'));
    const { container } = renderLayout('/jobs?project=gone&status=dead');
    const message = await screen.findByTestId('project-not-found');
    expect(screen.getByRole('heading', { level: 1, name: 'Project not found' })).toBeInTheDocument();
    expect(message).toHaveTextContent('No project gone is visible to you');
    expect(screen.queryByRole('heading', { name: 'Jobs' })).toBeNull(); // no empty page
    expect(await seriousViolations(container)).toEqual([]);
    await user.click(within(message).getByRole('link', { name: 'Show all projects' }));
    expect(location()).toBe('/jobs?status=dead');
    expect(await screen.findByRole('heading', { name: 'Jobs' })).toBeInTheDocument();
  });

  it('finds a project created since the lists were read by its id, with its role', async () => {
    const fresh = project({ id: 'p-new', orgId: TEAM_ORG, name: 'Brand new' });
    api.getProject.mockResolvedValue(fresh);
    renderLayout('/jobs?project=p-new');
    expect(await screen.findByRole('heading', { name: 'Jobs' })).toBeInTheDocument();
    expect(switcher()).toHaveValue('p-new');
    expect(within(switcher()).getByRole('option', { name: 'Brand new' })).toBeInTheDocument();
    expect(screen.getByTestId('project-role')).toHaveTextContent('Viewer');
    await waitFor(() => expect(screen.getByTestId('may-submit')).toHaveTextContent('false'));
    expect(api.getOrganization).not.toHaveBeenCalled(); // its organization is listed
  });
});
