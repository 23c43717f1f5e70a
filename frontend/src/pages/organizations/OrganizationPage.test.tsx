/** One organization: role-based controls (hidden, not disabled), members, projects, API errors. */
import { act, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import { authStore } from '../../api/instance';
import type { OrgRole } from '../../api/types';
import { useNotices } from '../../lib/notices';
import { member, organization, page, project } from '../../test/tenancy';
import { fakeTokens, renderWithProviders, seriousViolations } from '../../test/utils';
import { OrganizationPage } from './OrganizationPage';

vi.mock('../../api/endpoints', () => ({
  getOrganization: vi.fn(),
  updateOrganization: vi.fn(),
  listMembers: vi.fn(),
  addMember: vi.fn(),
  changeMemberRole: vi.fn(),
  removeMember: vi.fn(),
  listProjects: vi.fn(),
  createProject: vi.fn(),
  updateProject: vi.fn(),
  deleteProject: vi.fn(),
}));

const api = vi.mocked(endpoints);
const ORG_ID = 'org-acme';
const ME = 'user@test.com';

function setUp(role: OrgRole | null, platformRole: 'admin' | 'user' = 'user') {
  act(() => authStore.getState().login(fakeTokens({ email: ME, role: platformRole })));
  api.getOrganization.mockResolvedValue(organization({ id: ORG_ID, role }));
  api.listMembers.mockResolvedValue(
    page([member('boss@test.com', 'owner'), member(ME, role ?? 'viewer', 'u1'), member('zoe@test.com', 'member')].filter(
      (m) => role !== null || m.email !== ME,
    )),
  );
  api.listProjects.mockResolvedValue(
    page([project({ id: 'p-default', name: 'default', slug: 'default', personalDefault: true }), project({ id: 'p-web', name: 'Web' })]),
  );
  return renderPage();
}

/** The page at its route; another route (where "Leave" goes) draws nothing but the location. */
function renderPage() {
  return renderWithProviders(
    <Routes>
      <Route path="/organizations/:orgId" element={<OrganizationPage />} />
      <Route path="*" element={null} />
    </Routes>,
    { route: `/organizations/${ORG_ID}` },
  );
}

const memberRow = (email: string) => screen.getAllByTestId('member-row').find((r) => r.dataset.email === email)!;
const projectRow = (name: string) => screen.getAllByTestId('project-row').find((r) => r.dataset.projectName === name)!;
const lastNotice = () => useNotices.getState().notices.at(-1);

describe('<OrganizationPage>', () => {
  beforeEach(() => {
    for (const fn of Object.values(api)) fn.mockReset();
    useNotices.setState({ notices: [] });
  });
  afterEach(() => act(() => authStore.getState().logout()));

  it('shows a viewer the organization, its members and projects, and no control a viewer may not use', async () => {
    const { container } = setUp('viewer');
    expect(await screen.findByRole('heading', { level: 1, name: 'Acme Corp' })).toBeInTheDocument();
    await waitFor(() => expect(screen.getAllByTestId('member-row')).toHaveLength(3));
    await waitFor(() => expect(screen.getAllByTestId('project-row')).toHaveLength(2));
    expect(screen.getByTestId('my-role')).toHaveTextContent('Viewer');
    expect(api.getOrganization).toHaveBeenCalledWith(ORG_ID, expect.anything());
    expect(api.listProjects).toHaveBeenCalledWith({ orgId: ORG_ID, pageNumber: 1, pageSize: 25 }, expect.anything());

    // hidden, not disabled
    expect(screen.queryByRole('form', { name: 'Rename the organization' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Add a member' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Create a project' })).toBeNull();
    expect(screen.queryByRole('combobox')).toBeNull();
    expect(screen.queryByRole('button', { name: /^Remove/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Rename/ })).toBeNull();
    expect(screen.queryByRole('button', { name: /^Delete/ })).toBeNull();
    expect(screen.queryByRole('link', { name: /API keys/ })).toBeNull();
    expect(memberRow('zoe@test.com')).toHaveTextContent('Member');

    // but may leave
    expect(within(memberRow(ME)).getByRole('button', { name: 'Leave' })).toBeInTheDocument();
    expect(within(memberRow('boss@test.com')).queryByRole('button')).toBeNull();
    const projects = screen.getByTestId('projects-table');
    expect(within(projects).getAllByRole('columnheader').map((h) => h.textContent)).toEqual([
      'Name',
      'Slug',
      'Created by',
      'Created',
    ]);
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('shows an owner every control: rename, add, change role, remove, create, rename and delete projects', async () => {
    const { container } = setUp('owner');
    await waitFor(() => expect(screen.getAllByTestId('member-row')).toHaveLength(3));
    await waitFor(() => expect(screen.getAllByTestId('project-row')).toHaveLength(2));
    expect(screen.getByRole('form', { name: 'Rename the organization' })).toBeInTheDocument();
    expect(screen.getByRole('form', { name: 'Add a member' })).toBeInTheDocument();
    expect(screen.getByRole('form', { name: 'Create a project' })).toBeInTheDocument();
    expect(screen.getByRole('combobox', { name: 'Role of zoe@test.com' })).toHaveValue('member');
    expect(within(memberRow('zoe@test.com')).getByRole('button', { name: 'Remove' })).toBeInTheDocument();
    expect(within(memberRow(ME)).getByRole('button', { name: 'Leave' })).toBeInTheDocument();
    expect(within(memberRow(ME)).queryByRole('button', { name: 'Remove' })).toBeNull();

    expect(within(projectRow('Web')).getByRole('button', { name: 'Rename project Web' })).toBeInTheDocument();
    expect(within(projectRow('Web')).getByRole('button', { name: 'Delete' })).toBeInTheDocument();
    expect(within(projectRow('Web')).getByRole('link', { name: 'API keys of Web' })).toHaveAttribute(
      'href',
      '/projects/p-web/api-keys',
    );
    // a personal default project cannot be deleted: no button for it
    expect(within(projectRow('default')).getByRole('button', { name: 'Rename project default' })).toBeInTheDocument();
    expect(within(projectRow('default')).queryByRole('button', { name: 'Delete' })).toBeNull();
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('shows an organization admin the project controls but not the member controls', async () => {
    setUp('admin');
    await waitFor(() => expect(screen.getAllByTestId('project-row')).toHaveLength(2));
    await waitFor(() => expect(screen.getAllByTestId('member-row')).toHaveLength(3));
    expect(screen.getByRole('form', { name: 'Create a project' })).toBeInTheDocument();
    expect(within(projectRow('Web')).getByRole('button', { name: 'Delete' })).toBeInTheDocument();
    expect(screen.queryByRole('form', { name: 'Rename the organization' })).toBeNull();
    expect(screen.queryByRole('form', { name: 'Add a member' })).toBeNull();
    expect(screen.queryByRole('button', { name: 'Remove' })).toBeNull();
    expect(screen.queryByRole('combobox', { name: /^Role of/ })).toBeNull();
  });

  it('lets the platform admin who is not a member do what an owner may', async () => {
    setUp(null, 'admin');
    await waitFor(() => expect(screen.getAllByTestId('member-row')).toHaveLength(2));
    expect(screen.getByTestId('my-role')).toHaveTextContent('Not a member (platform admin)');
    expect(screen.getByRole('form', { name: 'Rename the organization' })).toBeInTheDocument();
    expect(screen.getByRole('form', { name: 'Add a member' })).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: 'Leave' })).toBeNull();
    expect(screen.getAllByRole('button', { name: 'Remove' })).toHaveLength(2);
  });

  it("adds a member by email and role, and shows the API's 404 for an unknown email", async () => {
    setUp('owner');
    await waitFor(() => expect(screen.getAllByTestId('member-row')).toHaveLength(3));
    api.addMember.mockRejectedValueOnce(new ApiError(404, 'not_found', 'no user registered nobody@test.com'));
    api.addMember.mockResolvedValueOnce(member('new@test.com', 'admin'));
    const user = userEvent.setup();
    const form = screen.getByRole('form', { name: 'Add a member' });
    await user.type(within(form).getByLabelText(/^Email/), 'nobody@test.com');
    await user.click(within(form).getByRole('button', { name: 'Add member' }));
    expect(await within(form).findByTestId('error-summary')).toHaveTextContent('no user registered nobody@test.com');

    await user.clear(within(form).getByLabelText(/^Email/));
    await user.type(within(form).getByLabelText(/^Email/), 'new@test.com');
    await user.selectOptions(within(form).getByLabelText('Role'), 'admin');
    await user.click(within(form).getByRole('button', { name: 'Add member' }));
    await waitFor(() => expect(api.addMember).toHaveBeenLastCalledWith(ORG_ID, { email: 'new@test.com', role: 'admin' }));
    await waitFor(() => expect(within(form).queryByTestId('error-summary')).toBeNull());
    expect(api.listMembers.mock.calls.length).toBeGreaterThan(1); // reloaded
  });

  it("changes a role, and shows the API's 409 when the last owner would go", async () => {
    setUp('owner');
    await waitFor(() => expect(screen.getAllByTestId('member-row')).toHaveLength(3));
    const user = userEvent.setup();
    api.changeMemberRole.mockResolvedValueOnce(member('zoe@test.com', 'viewer'));
    await user.selectOptions(screen.getByRole('combobox', { name: 'Role of zoe@test.com' }), 'viewer');
    await waitFor(() => expect(api.changeMemberRole).toHaveBeenCalledWith(ORG_ID, 'id-zoe@test.com', 'viewer'));

    api.changeMemberRole.mockRejectedValueOnce(new ApiError(409, 'conflict', 'an organization keeps an owner'));
    await user.selectOptions(screen.getByRole('combobox', { name: 'Role of boss@test.com' }), 'member');
    await waitFor(() => expect(lastNotice()).toMatchObject({ tone: 'error', text: 'Failed: an organization keeps an owner' }));
    expect(screen.getByRole('combobox', { name: 'Role of boss@test.com' })).toHaveValue('owner');
  });

  it('removes a member after confirming, and leaves (to the organization list)', async () => {
    setUp('owner');
    await waitFor(() => expect(screen.getAllByTestId('member-row')).toHaveLength(3));
    const user = userEvent.setup();
    api.removeMember.mockResolvedValue(undefined);
    await user.click(within(memberRow('zoe@test.com')).getByRole('button', { name: 'Remove' }));
    expect(api.removeMember).not.toHaveBeenCalled();
    await user.click(within(memberRow('zoe@test.com')).getByRole('button', { name: 'Yes, remove' }));
    await waitFor(() => expect(api.removeMember).toHaveBeenCalledWith(ORG_ID, 'id-zoe@test.com'));

    await user.click(within(memberRow(ME)).getByRole('button', { name: 'Leave' }));
    await user.click(within(memberRow(ME)).getByRole('button', { name: 'Yes, leave' }));
    await waitFor(() => expect(api.removeMember).toHaveBeenLastCalledWith(ORG_ID, 'u1'));
    await waitFor(() => expect(screen.getByTestId('location')).toHaveTextContent('/organizations'));
    expect(screen.getByTestId('location').textContent).toBe('/organizations');
  });

  it("creates, renames and deletes projects; shows the API's 409 for a taken slug", async () => {
    setUp('admin');
    await waitFor(() => expect(screen.getAllByTestId('project-row')).toHaveLength(2));
    const user = userEvent.setup();
    const form = screen.getByRole('form', { name: 'Create a project' });

    api.createProject.mockRejectedValueOnce(new ApiError(409, 'conflict', 'slug web is taken in this organization'));
    await user.type(within(form).getByLabelText('Project name'), 'Web');
    await user.click(within(form).getByRole('button', { name: 'Create project' }));
    expect(await within(form).findByTestId('error-summary')).toHaveTextContent('slug web is taken in this organization');

    api.createProject.mockResolvedValueOnce(project({ id: 'p-api', name: 'API' }));
    await user.clear(within(form).getByLabelText('Project name'));
    await user.type(within(form).getByLabelText('Project name'), 'API');
    await user.type(within(form).getByLabelText(/^Project slug/), 'api');
    await user.click(within(form).getByRole('button', { name: 'Create project' }));
    await waitFor(() => expect(api.createProject).toHaveBeenLastCalledWith({ orgId: ORG_ID, name: 'API', slug: 'api' }));

    api.updateProject.mockResolvedValue(project({ id: 'p-web', name: 'Website' }));
    await user.click(within(projectRow('Web')).getByRole('button', { name: 'Rename project Web' }));
    const input = within(projectRow('Web')).getByRole('textbox', { name: 'New name of Web' });
    await user.clear(input);
    await user.type(input, 'Website{Enter}');
    await waitFor(() => expect(api.updateProject).toHaveBeenCalledWith('p-web', { name: 'Website' }));

    api.deleteProject.mockRejectedValue(new ApiError(409, 'conflict', 'the project has unfinished jobs'));
    await user.click(await within(projectRow('Web')).findByRole('button', { name: 'Delete' }));
    await user.click(within(projectRow('Web')).getByRole('button', { name: 'Yes, delete' }));
    await waitFor(() => expect(api.deleteProject).toHaveBeenCalledWith('p-web'));
    await waitFor(() => expect(lastNotice()).toMatchObject({ tone: 'error', text: 'Failed: the project has unfinished jobs' }));
  });

  it("shows the API's 404 for an organization you may not see", async () => {
    act(() => authStore.getState().login(fakeTokens({ email: ME })));
    api.getOrganization.mockRejectedValue(new ApiError(404, 'not_found', 'organization not found'));
    renderPage();
    expect(await screen.findByRole('alert')).toHaveTextContent('organization not found');
    expect(api.listMembers).not.toHaveBeenCalled();
  });
});
