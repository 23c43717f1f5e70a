import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type SyntheticEvent } from 'react';
import { createOrganization, listOrganizations } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { ErrorSummary } from '../../components/ErrorSummary';
import type { Column } from '../../components/ListTable';
import { QueryTable } from '../../components/QueryList';
import { notify } from '../../lib/notices';
import { ROLE_LABELS } from '../../lib/tenancy';
import { useApiForm } from '../../lib/useApiForm';
import { usePageTitle } from '../../lib/usePageTitle';
import { Link } from '../../project/links';
import { useSearchParams } from '../../project/navigation';
import { NameSlugFields } from './NameSlugFields';

const PAGE_SIZE = 25;
const COLUMNS: readonly Column[] = [{ label: 'Name' }, { label: 'Slug' }, { label: 'Kind' }, { label: 'Your role' }];
const LABELS: Record<string, string> = { 'org.name': 'Name', 'org.slug': 'Slug' };

function CreateOrganizationForm() {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const { errors, message, attempt, busy, run } = useApiForm('org');

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    await run(name.trim() ? {} : { 'org.name': 'Required' }, async () => {
      const created = await createOrganization({ name: name.trim(), ...(slug.trim() ? { slug: slug.trim() } : {}) });
      notify(`Organization "${created.name}" created`);
      setName('');
      setSlug('');
      void client.invalidateQueries({ queryKey: queryKeys.organizations });
    });
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label="Create an organization" data-testid="org-form">
      <ErrorSummary
        errors={errors}
        labels={LABELS}
        message={message}
        focusKey={attempt}
        title="The organization was not created"
      />
      <NameSlugFields
        prefix="org"
        nameLabel="Name"
        slugLabel="Slug (optional)"
        slugHint="Lowercase letters, digits and single hyphens; derived from the name if empty"
        name={name}
        slug={slug}
        onName={setName}
        onSlug={setSlug}
        errors={errors}
      />
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create organization'}
      </button>
    </form>
  );
}

export function OrganizationsPage() {
  usePageTitle('Organizations');
  const [search, setSearch] = useSearchParams();
  const page = Number(search.get('page') ?? '1') || 1;
  const organizations = useQuery({
    queryKey: queryKeys.organizationList(page),
    queryFn: ({ signal }) => listOrganizations({ pageNumber: page, pageSize: PAGE_SIZE }, signal),
    placeholderData: keepPreviousData,
  });
  return (
    <>
      <h1>Organizations</h1>
      <section className="card" aria-labelledby="orgs-heading">
        <h2 id="orgs-heading" style={{ marginTop: 0 }}>
          Your organizations
        </h2>
        <QueryTable
          query={organizations}
          loadingLabel="Loading organizations…"
          empty="You belong to no organization. Create one below."
          tableLabel="Organizations table"
          pagination={{ page, onPage: (p) => setSearch(p === 1 ? {} : { page: String(p) }), label: 'Organization pages' }}
          testId="orgs-table"
          columns={COLUMNS}
        >
          {(org) => (
            <tr key={org.id} data-testid="org-row">
              <th scope="row">
                <Link to={`/organizations/${org.id}`}>{org.name}</Link>
              </th>
              <td className="mono">{org.slug}</td>
              <td>{org.personal ? <span className="badge badge-pending">Personal</span> : 'Team'}</td>
              <td>{org.role ? ROLE_LABELS[org.role] : <span className="muted">not a member (platform admin)</span>}</td>
            </tr>
          )}
        </QueryTable>
      </section>
      <section className="card" aria-labelledby="create-org-heading">
        <h2 id="create-org-heading" style={{ marginTop: 0 }}>
          Create an organization
        </h2>
        <p className="muted">You become its owner.</p>
        <CreateOrganizationForm />
      </section>
    </>
  );
}
