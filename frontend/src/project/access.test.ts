/** Who may do what in a project, as the console hides controls (docs/tenancy.md, "Roles"). */
import { describe, expect, it } from 'vitest';
import type { OrgRole } from '../api/types';
import { projectRights } from '../lib/tenancy';
import { ALPHA, BETA, ME, PERSONAL_PROJECT, teamAccess, teamOrganizations, teamProjects } from '../test/tenancy';
import { actingProject, buildDirectory, deniedReason, rightsIn } from './access';

describe('project rights per role', () => {
  it('viewer: none; member: submit and act; admin and owner: also manage; the platform admin: all', () => {
    const table = (['viewer', 'member', 'admin', 'owner'] as OrgRole[]).map((role) => [role, projectRights(role, false)]);
    expect(Object.fromEntries(table)).toEqual({
      viewer: { submit: false, act: false, manage: false },
      member: { submit: true, act: true, manage: false },
      admin: { submit: true, act: true, manage: true },
      owner: { submit: true, act: true, manage: true },
    });
    expect(projectRights(null, false)).toEqual({ submit: false, act: false, manage: false });
    expect(projectRights(null, true)).toEqual({ submit: true, act: true, manage: true });
  });
});

describe('the directory of projects', () => {
  it('groups projects by organization, by name, and finds the personal default project', () => {
    const directory = buildDirectory(teamOrganizations('viewer'), teamProjects(), { email: ME.toUpperCase() });
    expect(directory.groups.map((g) => [g.name, g.entries.map((e) => e.project.name)])).toEqual([
      ['Acme Corp', ['Alpha', 'Beta']],
      [ME, ['Default']],
    ]);
    expect(directory.personal?.project.id).toBe(PERSONAL_PROJECT);
    expect(directory.entries.get(ALPHA)?.role).toBe('viewer');
    // another user's personal project (the platform admin sees it) is not this user's
    expect(buildDirectory(teamOrganizations(null), teamProjects(), { email: 'other@test.com' }).personal).toBeNull();
  });
});

describe('rights in a row’s project, and in the project that acts', () => {
  it('a viewer of the chosen project may do nothing there; all projects: the personal default acts', () => {
    const chosen = teamAccess({ role: 'viewer', projectId: ALPHA });
    expect(actingProject(chosen)?.project.name).toBe('Alpha');
    expect(rightsIn(chosen)).toMatchObject({ submit: false, act: false, manage: false, role: 'viewer', name: 'Alpha' });
    const all = teamAccess({ role: 'viewer' });
    expect(actingProject(all)?.project.id).toBe(PERSONAL_PROJECT);
    expect(rightsIn(all)).toMatchObject({ submit: true, act: true, manage: true, role: 'owner' });
    // each row by its own project
    expect(rightsIn(all, BETA)).toMatchObject({ act: false, role: 'viewer', name: 'Beta' });
    expect(rightsIn(all, PERSONAL_PROJECT).act).toBe(true);
  });

  it('a member acts on jobs but does not manage schedules', () => {
    expect(rightsIn(teamAccess({ role: 'member', projectId: ALPHA }))).toMatchObject({ submit: true, act: true, manage: false });
    expect(rightsIn(teamAccess({ role: 'admin', projectId: ALPHA }))).toMatchObject({ submit: true, act: true, manage: true });
  });

  it('the platform admin may do everything, also where not a member', () => {
    expect(rightsIn(teamAccess({ role: null, platformAdmin: true, projectId: ALPHA }), BETA)).toMatchObject({
      submit: true,
      act: true,
      manage: true,
      role: null,
      name: 'Beta',
    });
  });

  it('a project the complete lists do not hold is not yours; past a cut list, or unread, nothing is hidden', () => {
    const access = teamAccess({ role: 'owner' });
    expect(rightsIn(access, 'unknown')).toMatchObject({ act: false, known: true });
    const cut = { ...access, directory: { ...access.directory, truncated: true } };
    expect(rightsIn(cut, 'unknown')).toMatchObject({ act: true, known: false });
    expect(rightsIn(null, ALPHA)).toMatchObject({ submit: true, act: true, manage: true, known: false });
    expect(rightsIn({ ...access, state: 'error' }, 'unknown').act).toBe(true);
  });

  it('says why a control is not there', () => {
    const viewer = rightsIn(teamAccess({ role: 'viewer', projectId: ALPHA }));
    expect(deniedReason(viewer, 'submit', 'submitting jobs')).toBe(
      'You are a viewer in Alpha: submitting jobs takes the member role or above.',
    );
    const member = rightsIn(teamAccess({ role: 'member', projectId: ALPHA }));
    expect(deniedReason(member, 'manage', 'creating schedules')).toBe(
      'You are a member in Alpha: creating schedules takes the admin role or above.',
    );
    const stranger = rightsIn(teamAccess({ role: 'owner' }), 'unknown');
    expect(deniedReason(stranger, 'act', 'retrying jobs')).toBe(
      'You are not a member of this project: retrying jobs takes the member role or above.',
    );
  });
});
