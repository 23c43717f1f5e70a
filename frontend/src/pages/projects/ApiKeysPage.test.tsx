/** A project's API keys: the new key shown once, revocation, the 403 for who may not manage keys. */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { Link, Route, Routes } from 'react-router';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import { useNotices } from '../../lib/notices';
import { apiKey, createdKey, page, project } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { ApiKeysPage } from './ApiKeysPage';

vi.mock('../../api/endpoints', () => ({
  getProject: vi.fn(),
  listApiKeys: vi.fn(),
  createApiKey: vi.fn(),
  revokeApiKey: vi.fn(),
}));

const api = vi.mocked(endpoints);
const PROJECT_ID = 'p-web';
const SECRET = 'jk_newkey12_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0';

/** The keys page, and an organization page to leave to (with a link back). */
function renderPage() {
  return renderWithProviders(
    <Routes>
      <Route path="/projects/:projectId/api-keys" element={<ApiKeysPage />} />
      <Route path="/organizations/:orgId" element={<Link to={`/projects/${PROJECT_ID}/api-keys`}>Back to the keys</Link>} />
    </Routes>,
    { route: `/projects/${PROJECT_ID}/api-keys` },
  );
}

const rows = () => screen.getAllByTestId('key-row');
const row = (name: string) => rows().find((r) => r.dataset.keyName === name)!;

describe('<ApiKeysPage>', () => {
  beforeEach(() => {
    for (const fn of Object.values(api)) fn.mockReset();
    useNotices.setState({ notices: [] });
    api.getProject.mockResolvedValue(project({ id: PROJECT_ID, name: 'Web', orgId: 'org-acme' }));
  });

  it('lists the keys by prefix, never a secret, with their state; revokes an active key after confirming', async () => {
    api.listApiKeys.mockResolvedValue(
      page([
        apiKey({ id: 'k1', name: 'CI', prefix: 'abcd1234', lastUsedAt: '2026-01-06T10:00:00Z', expiresAt: '2999-01-01T00:00:00Z' }),
        apiKey({ id: 'k2', name: 'Old', role: 'viewer', prefix: 'zzzz9999', revokedAt: '2026-01-07T10:00:00Z', revokedBy: 'boss@test.com' }),
      ]),
    );
    api.revokeApiKey.mockResolvedValue(undefined);
    const { container } = renderPage();
    expect(await screen.findByRole('heading', { level: 1, name: 'API keys of Web' })).toBeInTheDocument();
    await waitFor(() => expect(rows()).toHaveLength(2));
    expect(within(row('CI')).getByText('jk_abcd1234_…')).toBeInTheDocument();
    expect(row('CI')).toHaveAttribute('data-state', 'active');
    expect(row('CI')).toHaveTextContent('Member');
    expect(row('Old')).toHaveTextContent('Viewer');
    expect(row('Old')).toHaveTextContent('Revoked');
    expect(row('Old')).toHaveTextContent('by boss@test.com');
    expect(within(row('Old')).queryByRole('button', { name: 'Revoke' })).toBeNull();
    expect(screen.getByTestId('keys-table').querySelectorAll('th[scope="col"]')).toHaveLength(8);
    expect(screen.getByRole('link', { name: "Back to the project's organization" })).toHaveAttribute('href', '/organizations/org-acme');
    expect(await seriousViolations(container)).toEqual([]);

    await userEvent.click(within(row('CI')).getByRole('button', { name: 'Revoke' }));
    expect(api.revokeApiKey).not.toHaveBeenCalled();
    await userEvent.click(within(row('CI')).getByRole('button', { name: 'Yes, revoke' }));
    await waitFor(() => expect(api.revokeApiKey).toHaveBeenCalledWith(PROJECT_ID, 'k1'));
    await waitFor(() => expect(api.listApiKeys.mock.calls.length).toBeGreaterThan(1));
  });

  it('shows a new key once, with a Copy button and the warning, and never again after leaving', async () => {
    api.listApiKeys.mockResolvedValueOnce(page([]));
    api.listApiKeys.mockResolvedValue(page([apiKey({ id: 'k-new', name: 'Deploy', prefix: 'newkey12', role: 'viewer' })]));
    api.createApiKey.mockResolvedValue(createdKey({ id: 'k-new', name: 'Deploy', prefix: 'newkey12', role: 'viewer', key: SECRET }));
    const { container } = renderPage();
    const user = userEvent.setup();
    await screen.findByTestId('empty-state');
    const form = screen.getByRole('form', { name: 'Create an API key' });

    await user.type(within(form).getByLabelText('Name'), 'Deploy');
    await user.selectOptions(within(form).getByLabelText('Role'), 'viewer');
    await user.type(within(form).getByLabelText('Expires on (optional)'), '2999-03-04');
    await user.click(within(form).getByRole('button', { name: 'Create API key' }));
    await waitFor(() => expect(api.createApiKey).toHaveBeenCalledTimes(1));
    const [projectId, body] = api.createApiKey.mock.calls[0]!;
    expect(projectId).toBe(PROJECT_ID);
    expect(body).toMatchObject({ name: 'Deploy', role: 'viewer' });
    expect(body.expiresAt).toMatch(/^2999-03-0[45]T\d\d:\d\d:\d\d\.\d{3}Z$/); // the end of that day, in UTC

    const field = await screen.findByRole('textbox', { name: 'New API key' });
    expect(field).toHaveValue(SECRET);
    expect(field).toHaveAttribute('readonly');
    const warning = screen.getByRole('alert');
    expect(warning).toHaveTextContent('Copy this key now: it will not be shown again.');
    expect(warning).toBeVisible();
    await user.click(screen.getByRole('button', { name: 'Copy' }));
    expect(await navigator.clipboard.readText()).toBe(SECRET);
    // the reloaded list names the key by its prefix only
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(within(row('Deploy')).getByText('jk_newkey12_…')).toBeInTheDocument();
    expect(screen.getByTestId('keys-table')).not.toHaveTextContent(SECRET);
    expect(await seriousViolations(container)).toEqual([]);

    // leave, come back: the list is there again, the key is not
    await user.click(screen.getByRole('link', { name: "Back to the project's organization" }));
    await user.click(await screen.findByRole('link', { name: 'Back to the keys' }));
    await waitFor(() => expect(rows()).toHaveLength(1));
    expect(screen.queryByRole('textbox', { name: 'New API key' })).toBeNull();
    expect(screen.queryByTestId('created-key')).toBeNull();
    expect(document.body).not.toHaveTextContent(SECRET);
  });

  it('hides the new key once you say it is stored', async () => {
    api.listApiKeys.mockResolvedValue(page([]));
    api.createApiKey.mockResolvedValue(createdKey({ key: SECRET }));
    renderPage();
    const user = userEvent.setup();
    await screen.findByTestId('empty-state');
    await user.type(screen.getByLabelText('Name'), 'CI');
    await user.click(screen.getByRole('button', { name: 'Create API key' }));
    expect(await screen.findByRole('textbox', { name: 'New API key' })).toHaveValue(SECRET);
    expect(api.createApiKey.mock.calls[0]![1]).toEqual({ name: 'CI', role: 'member' });
    await user.click(screen.getByRole('button', { name: 'I have stored it' }));
    expect(screen.queryByTestId('created-key')).toBeNull();
    expect(document.body).not.toHaveTextContent(SECRET);
  });

  it("shows the API's 422 at the form (an expiry in the past)", async () => {
    api.listApiKeys.mockResolvedValue(page([]));
    api.createApiKey.mockRejectedValue(
      new ApiError(422, 'validation_error', 'request validation failed', [{ field: 'expiresAt', message: 'must be in the future' }]),
    );
    renderPage();
    const user = userEvent.setup();
    await screen.findByTestId('empty-state');
    await user.type(screen.getByLabelText('Name'), 'CI');
    await user.click(screen.getByRole('button', { name: 'Create API key' }));
    const summary = await screen.findByTestId('error-summary');
    expect(within(summary).getByRole('link', { name: 'Expires on: must be in the future' })).toBeInTheDocument();
    expect(screen.queryByTestId('created-key')).toBeNull();
  });

  it("shows a member the API's 403 message, and no form", async () => {
    api.listApiKeys.mockRejectedValue(new ApiError(403, 'forbidden', 'managing API keys needs the admin role in this project'));
    const { container } = renderPage();
    const alert = await screen.findByRole('alert');
    expect(alert).toHaveTextContent("You may not manage this project's API keys");
    expect(alert).toHaveTextContent('managing API keys needs the admin role in this project');
    expect(screen.queryByRole('form', { name: 'Create an API key' })).toBeNull();
    expect(screen.queryByTestId('keys-table')).toBeNull();
    expect(await seriousViolations(container)).toEqual([]);
  });
});
