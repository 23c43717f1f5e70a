/** The organization list and the create form. */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import { errorOf } from '../../test/forms';
import { organization, page } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { OrganizationsPage } from './OrganizationsPage';

vi.mock('../../api/endpoints', () => ({ listOrganizations: vi.fn(), createOrganization: vi.fn() }));

const listOrganizations = vi.mocked(endpoints.listOrganizations);
const createOrganization = vi.mocked(endpoints.createOrganization);

const personal = organization({ id: 'org-personal', name: 'user@test.com', slug: 'user-3f2a9c', personal: true });
const acme = organization({ id: 'org-acme', name: 'Acme Corp', slug: 'acme-corp', role: 'viewer' });

describe('<OrganizationsPage>', () => {
  beforeEach(() => {
    listOrganizations.mockReset();
    createOrganization.mockReset();
  });

  it('lists your organizations with their slug, the personal badge and your role, each linking to its page', async () => {
    listOrganizations.mockResolvedValue(page([acme, personal]));
    const { container } = renderWithProviders(<OrganizationsPage />);
    const rows = await screen.findAllByTestId('org-row');
    expect(rows).toHaveLength(2);
    expect(within(rows[0]!).getByRole('link', { name: 'Acme Corp' })).toHaveAttribute('href', '/organizations/org-acme');
    expect(rows[0]).toHaveTextContent('acme-corp');
    expect(rows[0]).toHaveTextContent('Viewer');
    expect(within(rows[0]!).queryByText('Personal')).toBeNull();
    expect(within(rows[1]!).getByText('Personal')).toBeInTheDocument();
    expect(rows[1]).toHaveTextContent('Owner');
    expect(screen.getAllByRole('columnheader').map((h) => h.textContent)).toEqual(['Name', 'Slug', 'Kind', 'Your role']);
    expect(listOrganizations).toHaveBeenCalledWith({ pageNumber: 1, pageSize: 25 }, expect.anything());
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('creates an organization (the slug only when given) and reloads the list', async () => {
    listOrganizations.mockResolvedValueOnce(page([personal]));
    listOrganizations.mockResolvedValue(page([organization({ id: 'org-new', name: 'New Team' }), personal]));
    createOrganization.mockResolvedValue(organization({ id: 'org-new', name: 'New Team', slug: 'new-team' }));
    renderWithProviders(<OrganizationsPage />);
    await screen.findAllByTestId('org-row');
    const user = userEvent.setup();

    await user.click(screen.getByRole('button', { name: 'Create organization' }));
    expect(createOrganization).not.toHaveBeenCalled();
    expect(errorOf(screen.getByLabelText('Name'))).toBe('Required');

    await user.type(screen.getByLabelText('Name'), '  New Team ');
    await user.click(screen.getByRole('button', { name: 'Create organization' }));
    await waitFor(() => expect(createOrganization).toHaveBeenCalledWith({ name: 'New Team' }));
    expect(await screen.findByRole('link', { name: 'New Team' })).toHaveAttribute('href', '/organizations/org-new');
    expect(screen.getByLabelText('Name')).toHaveValue('');

    await user.type(screen.getByLabelText('Name'), 'Other');
    await user.type(screen.getByLabelText(/^Slug/), 'other-team');
    await user.click(screen.getByRole('button', { name: 'Create organization' }));
    await waitFor(() => expect(createOrganization).toHaveBeenLastCalledWith({ name: 'Other', slug: 'other-team' }));
  });

  it("shows the API's message when the slug is taken (409) and its field errors (422)", async () => {
    listOrganizations.mockResolvedValue(page([personal]));
    createOrganization.mockRejectedValueOnce(new ApiError(409, 'conflict', 'slug acme-corp is taken'));
    createOrganization.mockRejectedValueOnce(
      new ApiError(422, 'validation_error', 'request validation failed', [
        { field: 'slug', message: "String should match pattern '^[a-z0-9]+(-[a-z0-9]+)*$'" },
      ]),
    );
    const { container } = renderWithProviders(<OrganizationsPage />);
    await screen.findAllByTestId('org-row');
    const user = userEvent.setup();
    await user.type(screen.getByLabelText('Name'), 'Acme Corp');
    await user.click(screen.getByRole('button', { name: 'Create organization' }));
    const summary = await screen.findByTestId('error-summary');
    expect(summary).toHaveTextContent('The organization was not created');
    expect(summary).toHaveTextContent('slug acme-corp is taken');

    await user.type(screen.getByLabelText(/^Slug/), 'Bad Slug');
    await user.click(screen.getByRole('button', { name: 'Create organization' }));
    await waitFor(() => expect(errorOf(screen.getByLabelText(/^Slug/))).toMatch(/should match pattern/));
    expect(screen.getByTestId('error-summary')).not.toHaveTextContent('request validation failed');
    expect(await seriousViolations(container)).toEqual([]);
  });
});
