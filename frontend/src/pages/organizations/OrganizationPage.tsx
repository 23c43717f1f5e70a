import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type SyntheticEvent } from 'react';
import { useLocation, useParams } from 'react-router';
import { errorMessage } from '../../api/client';
import {
  addMember,
  changeMemberRole,
  createProject,
  deleteProject,
  getOrganization,
  listMembers,
  listProjects,
  removeMember,
  updateOrganization,
  updateProject,
} from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { ORG_ROLES, type MemberOut, type OrganizationOut, type OrgRole, type ProjectOut } from '../../api/types';
import { useAuth, useIsAdmin } from '../../auth/hooks';
import { ConfirmAction } from '../../components/ConfirmAction';
import { ErrorSummary } from '../../components/ErrorSummary';
import { Field, InputField } from '../../components/Field';
import type { Column } from '../../components/ListTable';
import { QueryTable } from '../../components/QueryList';
import { ErrorState, Loading } from '../../components/states';
import { formatDateTime } from '../../lib/format';
import { notify } from '../../lib/notices';
import { orgRights, ROLE_LABELS, type OrgRights } from '../../lib/tenancy';
import { useApiForm } from '../../lib/useApiForm';
import { usePageTitle } from '../../lib/usePageTitle';
import { useProjectAccess } from '../../project/access';
import { Link } from '../../project/links';
import { useNavigate, useProjectId } from '../../project/navigation';
import { switchTarget } from '../../project/url';
import { NameSlugFields } from './NameSlugFields';

const PAGE_SIZE = 25;
const fail = (error: unknown) => notify(`Failed: ${errorMessage(error)}`, 'error');

function RoleOptions() {
  return ORG_ROLES.map((role) => (
    <option key={role} value={role}>
      {ROLE_LABELS[role]}
    </option>
  ));
}

// ---- the organization ----

const RENAME_LABELS: Record<string, string> = { 'rename.name': 'Name', 'rename.slug': 'Slug' };

function RenameOrganizationForm({ org }: { org: OrganizationOut }) {
  const client = useQueryClient();
  const [name, setName] = useState(org.name);
  const [slug, setSlug] = useState(org.slug);
  const { errors, message, attempt, busy, run } = useApiForm('rename');

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (!name.trim()) found['rename.name'] = 'Required';
    if (!slug.trim()) found['rename.slug'] = 'Required';
    await run(found, async () => {
      const body = {
        ...(name.trim() !== org.name ? { name: name.trim() } : {}),
        ...(slug.trim() !== org.slug ? { slug: slug.trim() } : {}),
      };
      if (Object.keys(body).length === 0) return;
      const updated = await updateOrganization(org.id, body);
      notify(`Organization "${updated.name}" saved`);
      client.setQueryData(queryKeys.organization(org.id), updated);
      void client.invalidateQueries({ queryKey: queryKeys.organizations });
    });
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label="Rename the organization" data-testid="rename-org-form">
      <ErrorSummary errors={errors} labels={RENAME_LABELS} message={message} focusKey={attempt} title="The organization was not saved" />
      <NameSlugFields
        prefix="rename"
        nameLabel="Name"
        slugLabel="Slug"
        slugHint="Lowercase letters, digits and single hyphens"
        name={name}
        slug={slug}
        onName={setName}
        onSlug={setSlug}
        errors={errors}
      />
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Saving…' : 'Save organization'}
      </button>
    </form>
  );
}

// ---- members ----

const MEMBER_LABELS: Record<string, string> = { 'member.email': 'Email', 'member.role': 'Role' };

function AddMemberForm({ orgId }: { orgId: string }) {
  const client = useQueryClient();
  const [email, setEmail] = useState('');
  const [role, setRole] = useState<OrgRole>('member');
  const { errors, message, attempt, busy, run } = useApiForm('member');

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    await run(email.trim() ? {} : { 'member.email': 'Required' }, async () => {
      const added = await addMember(orgId, { email: email.trim(), role });
      notify(`${added.email} added as ${ROLE_LABELS[added.role].toLowerCase()}`);
      setEmail('');
      void client.invalidateQueries({ queryKey: queryKeys.members(orgId) });
    });
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label="Add a member" data-testid="add-member-form">
      <ErrorSummary errors={errors} labels={MEMBER_LABELS} message={message} focusKey={attempt} title="The member was not added" />
      <div className="field-row">
        <InputField
          path="member.email"
          label="Email"
          hint="A registered user's"
          type="email"
          autoComplete="off"
          error={errors['member.email']}
          value={email}
          maxLength={320}
          onChange={setEmail}
        />
        <Field path="member.role" label="Role" error={errors['member.role']}>
          {(p) => (
            <select {...p} value={role} onChange={(e) => setRole(e.target.value as OrgRole)}>
              <RoleOptions />
            </select>
          )}
        </Field>
      </div>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Adding…' : 'Add member'}
      </button>
    </form>
  );
}

function MemberRow({ orgId, member, rights, isMe }: { orgId: string; member: MemberOut; rights: OrgRights; isMe: boolean }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  // leaving the organization of the project the console follows: back to all projects
  const followed = useProjectAccess()?.chosen?.project.orgId === orgId;
  const change = useMutation({
    mutationFn: (role: OrgRole) => changeMemberRole(orgId, member.userId, role),
    onSuccess: (updated) => {
      notify(`${updated.email} is now ${ROLE_LABELS[updated.role].toLowerCase()}`);
      void client.invalidateQueries({ queryKey: queryKeys.members(orgId) });
      if (isMe) void client.invalidateQueries({ queryKey: queryKeys.organizations });
    },
    onError: fail,
  });
  const remove = useMutation({
    mutationFn: () => removeMember(orgId, member.userId),
    onSuccess: () => {
      if (isMe) {
        notify('You left the organization');
        void client.invalidateQueries({ queryKey: queryKeys.organizations });
        void client.invalidateQueries({ queryKey: queryKeys.projects });
        navigate('/organizations', followed ? { project: null } : {});
        return;
      }
      notify(`${member.email} removed`);
      void client.invalidateQueries({ queryKey: queryKeys.members(orgId) });
    },
    onError: fail,
  });
  const selectId = `member-role-${member.userId}`;
  return (
    <tr data-testid="member-row" data-email={member.email}>
      <th scope="row">
        {member.email}
        {isMe ? <span className="muted"> (you)</span> : null}
      </th>
      <td>
        {rights.manageMembers ? (
          <>
            <label htmlFor={selectId} className="visually-hidden">
              Role of {member.email}
            </label>
            <select
              id={selectId}
              value={member.role}
              disabled={change.isPending}
              onChange={(e) => change.mutate(e.target.value as OrgRole)}
            >
              <RoleOptions />
            </select>
          </>
        ) : (
          ROLE_LABELS[member.role]
        )}
      </td>
      <td className="nowrap">{formatDateTime(member.addedAt)}</td>
      <td>
        {isMe ? (
          <ConfirmAction
            label="Leave"
            confirmLabel="Yes, leave"
            question="Leave this organization?"
            onConfirm={() => remove.mutate()}
            busy={remove.isPending}
            testId="leave-org"
          />
        ) : rights.manageMembers ? (
          <ConfirmAction
            label="Remove"
            confirmLabel="Yes, remove"
            question={`Remove ${member.email}?`}
            onConfirm={() => remove.mutate()}
            busy={remove.isPending}
            testId={`remove-member-${member.email}`}
          />
        ) : null}
      </td>
    </tr>
  );
}

const MEMBER_COLUMNS: readonly Column[] = [{ label: 'Email' }, { label: 'Role' }, { label: 'Added' }, { label: 'Actions' }];

function MembersSection({ org, rights }: { org: OrganizationOut; rights: OrgRights }) {
  const user = useAuth((state) => state.session?.user);
  const [page, setPage] = useState(1);
  const members = useQuery({
    queryKey: queryKeys.memberList(org.id, page),
    queryFn: ({ signal }) => listMembers(org.id, { pageNumber: page, pageSize: PAGE_SIZE }, signal),
    placeholderData: keepPreviousData,
  });
  const isMe = (member: MemberOut) =>
    !!user && (member.userId === user.id || member.email.toLowerCase() === user.email.toLowerCase());
  return (
    <section className="card" aria-labelledby="members-heading">
      <h2 id="members-heading" style={{ marginTop: 0 }}>
        Members
      </h2>
      <QueryTable
        query={members}
        loadingLabel="Loading members…"
        empty="No members."
        tableLabel="Members table"
        pagination={{ page, onPage: setPage, label: 'Member pages' }}
        testId="members-table"
        columns={MEMBER_COLUMNS}
      >
        {(member) => <MemberRow key={member.userId} orgId={org.id} member={member} rights={rights} isMe={isMe(member)} />}
      </QueryTable>
      {rights.manageMembers ? (
        <>
          <h3>Add a member</h3>
          <AddMemberForm orgId={org.id} />
        </>
      ) : null}
    </section>
  );
}

// ---- projects ----

const PROJECT_LABELS: Record<string, string> = { 'project.name': 'Name', 'project.slug': 'Slug' };

function CreateProjectForm({ orgId }: { orgId: string }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [slug, setSlug] = useState('');
  const { errors, message, attempt, busy, run } = useApiForm('project');

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    await run(name.trim() ? {} : { 'project.name': 'Required' }, async () => {
      const created = await createProject({ orgId, name: name.trim(), ...(slug.trim() ? { slug: slug.trim() } : {}) });
      notify(`Project "${created.name}" created`);
      setName('');
      setSlug('');
      void client.invalidateQueries({ queryKey: queryKeys.projects });
    });
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label="Create a project" data-testid="create-project-form">
      <ErrorSummary errors={errors} labels={PROJECT_LABELS} message={message} focusKey={attempt} title="The project was not created" />
      <NameSlugFields
        prefix="project"
        nameLabel="Project name"
        slugLabel="Project slug (optional)"
        slugHint="Unique in the organization; derived from the name if empty"
        name={name}
        slug={slug}
        onName={setName}
        onSlug={setSlug}
        errors={errors}
      />
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create project'}
      </button>
    </form>
  );
}

function ProjectRow({ project, rights }: { project: ProjectOut; rights: OrgRights }) {
  const client = useQueryClient();
  const navigate = useNavigate();
  const location = useLocation();
  const followed = useProjectId() === project.id;
  const [renaming, setRenaming] = useState(false);
  const [name, setName] = useState(project.name);
  const done = (text: string) => {
    notify(text);
    void client.invalidateQueries({ queryKey: queryKeys.projects });
  };
  const rename = useMutation({
    mutationFn: (newName: string) => updateProject(project.id, { name: newName }),
    onSuccess: (updated) => {
      setRenaming(false);
      done(`Project renamed to "${updated.name}"`);
    },
    onError: fail,
  });
  const remove = useMutation({
    mutationFn: () => deleteProject(project.id),
    onSuccess: () => {
      done(`Project "${project.name}" deleted`);
      // the console followed it: back to all projects
      if (followed) navigate(switchTarget(location, null), { project: null });
    },
    onError: fail,
  });
  const inputId = `project-name-${project.id}`;
  const submitRename = (event: SyntheticEvent) => {
    event.preventDefault();
    if (!name.trim()) {
      notify('Failed: a project needs a name', 'error');
      return;
    }
    rename.mutate(name.trim());
  };
  return (
    <tr data-testid="project-row" data-project-name={project.name}>
      <th scope="row">
        {project.name}
        {project.personalDefault ? <span className="muted"> (default)</span> : null}
      </th>
      <td className="mono">{project.slug}</td>
      <td>{project.createdBy}</td>
      <td className="nowrap">{formatDateTime(project.createdAt)}</td>
      {rights.manageProjects ? (
        <td>
          {renaming ? (
            <form className="inline-confirm" onSubmit={submitRename} aria-label={`Rename project ${project.name}`}>
              <label htmlFor={inputId} className="visually-hidden">
                New name of {project.name}
              </label>
              <input id={inputId} value={name} maxLength={200} onChange={(e) => setName(e.target.value)} autoFocus />
              <button type="submit" className="primary" disabled={rename.isPending}>
                {rename.isPending ? 'Saving…' : 'Save'}
              </button>
              <button
                type="button"
                onClick={() => {
                  setRenaming(false);
                  setName(project.name);
                }}
              >
                Cancel
              </button>
            </form>
          ) : (
            <div className="toolbar" style={{ margin: 0 }}>
              <Link to={`/projects/${project.id}/api-keys`} aria-label={`API keys of ${project.name}`}>
                API keys
              </Link>
              <button type="button" onClick={() => setRenaming(true)} aria-label={`Rename project ${project.name}`}>
                Rename
              </button>
              {project.personalDefault ? null : (
                <ConfirmAction
                  label="Delete"
                  confirmLabel="Yes, delete"
                  question={`Delete project "${project.name}"?`}
                  onConfirm={() => remove.mutate()}
                  busy={remove.isPending}
                  testId={`delete-project-${project.name}`}
                />
              )}
            </div>
          )}
        </td>
      ) : null}
    </tr>
  );
}

function projectColumns(rights: OrgRights): Column[] {
  return [
    { label: 'Name' },
    { label: 'Slug' },
    { label: 'Created by' },
    { label: 'Created' },
    ...(rights.manageProjects ? [{ label: 'Actions' }] : []),
  ];
}

function ProjectsSection({ org, rights }: { org: OrganizationOut; rights: OrgRights }) {
  const [page, setPage] = useState(1);
  const projects = useQuery({
    queryKey: queryKeys.projectList(org.id, page),
    queryFn: ({ signal }) => listProjects({ orgId: org.id, pageNumber: page, pageSize: PAGE_SIZE }, signal),
    placeholderData: keepPreviousData,
  });
  return (
    <section className="card" aria-labelledby="projects-heading">
      <h2 id="projects-heading" style={{ marginTop: 0 }}>
        Projects
      </h2>
      <QueryTable
        query={projects}
        loadingLabel="Loading projects…"
        empty="No projects yet."
        tableLabel="Projects table"
        pagination={{ page, onPage: setPage, label: 'Project pages' }}
        testId="projects-table"
        columns={projectColumns(rights)}
      >
        {(project) => <ProjectRow key={project.id} project={project} rights={rights} />}
      </QueryTable>
      {rights.manageProjects ? (
        <>
          <h3>Create a project</h3>
          <CreateProjectForm orgId={org.id} />
        </>
      ) : null}
    </section>
  );
}

// ---- the page ----

export function OrganizationPage() {
  const { orgId = '' } = useParams();
  const platformAdmin = useIsAdmin();
  const org = useQuery({
    queryKey: queryKeys.organization(orgId),
    queryFn: ({ signal }) => getOrganization(orgId, signal),
  });
  usePageTitle(org.data ? org.data.name : 'Organization');
  if (org.isPending) return <Loading label="Loading the organization…" />;
  if (org.isError) {
    return (
      <>
        <h1>Organization</h1>
        <p>
          <Link to="/organizations">All organizations</Link>
        </p>
        <ErrorState error={org.error} onRetry={() => void org.refetch()} />
      </>
    );
  }
  const data = org.data;
  const rights = orgRights(data.role, platformAdmin);
  return (
    <>
      <h1>{data.name}</h1>
      <p>
        <Link to="/organizations">All organizations</Link>
      </p>
      <section className="card" aria-labelledby="org-heading" data-testid="org-summary">
        <h2 id="org-heading" style={{ marginTop: 0 }}>
          About
        </h2>
        <dl className="props">
          <dt>Slug</dt>
          <dd className="mono">{data.slug}</dd>
          <dt>Kind</dt>
          <dd>{data.personal ? <span className="badge badge-pending">Personal</span> : 'Team'}</dd>
          <dt>Your role</dt>
          <dd data-testid="my-role">{data.role ? ROLE_LABELS[data.role] : 'Not a member (platform admin)'}</dd>
          <dt>Created</dt>
          <dd>{formatDateTime(data.createdAt)}</dd>
        </dl>
        {rights.rename ? (
          <>
            <h3>Rename</h3>
            <RenameOrganizationForm key={`${data.name}/${data.slug}`} org={data} />
          </>
        ) : null}
      </section>
      <MembersSection org={data} rights={rights} />
      <ProjectsSection org={data} rights={rights} />
    </>
  );
}
