/**
 * The projects a user sees, their role in each, and what that role lets them do: the
 * console's view of docs/tenancy.md. Pure; ./ProjectProvider.tsx reads the lists and provides
 * the result to every page (`useProjectAccess`, `useRights`).
 *
 * A project's role is its organization's (`GET /api/organizations` answers `role` per
 * organization); the platform admin (`role: admin` on the session) may do everything, and is
 * listed with role null where not a member.
 */
import { createContext, useContext } from 'react';
import type { OrganizationOut, OrgRole, ProjectOut } from '../api/types';
import { LEAST_ROLE, projectRights, type ProjectRights } from '../lib/tenancy';

export interface ProjectEntry {
  project: ProjectOut;
  /** Its organization (null when not listed: then the role is not known either). */
  org: OrganizationOut | null;
  /** Your role in its organization (null: not a member). */
  role: OrgRole | null;
}

export interface ProjectGroup {
  orgId: string;
  /** The organization's name (its id while it is not listed). */
  name: string;
  entries: ProjectEntry[];
}

export interface ProjectDirectory {
  entries: ReadonlyMap<string, ProjectEntry>;
  /** By organization name, each organization's projects by name: the switcher's groups. */
  groups: ProjectGroup[];
  /** The user's personal default project, where a submission without a project goes. */
  personal: ProjectEntry | null;
  /** More projects or organizations than were read: a project not listed may still be yours. */
  truncated: boolean;
}

const byName = (a: string, b: string) => a.localeCompare(b, undefined, { sensitivity: 'base' });

export function buildDirectory(
  organizations: readonly OrganizationOut[],
  projects: readonly ProjectOut[],
  { email, truncated = false }: { email: string | null; truncated?: boolean },
): ProjectDirectory {
  const orgs = new Map(organizations.map((org) => [org.id, org]));
  const entries = new Map<string, ProjectEntry>();
  const groups = new Map<string, ProjectGroup>();
  for (const project of projects) {
    const org = orgs.get(project.orgId) ?? null;
    const entry: ProjectEntry = { project, org, role: org?.role ?? null };
    entries.set(project.id, entry);
    let group = groups.get(project.orgId);
    if (!group) {
      group = { orgId: project.orgId, name: org?.name ?? project.orgId, entries: [] };
      groups.set(project.orgId, group);
    }
    group.entries.push(entry);
  }
  for (const group of groups.values()) group.entries.sort((a, b) => byName(a.project.name, b.project.name));
  const mine = email?.toLowerCase();
  // the personal default project is created by its user (docs/tenancy.md: derived from the email)
  const personal =
    [...entries.values()].find(
      (e) => e.project.personalDefault && e.org?.personal === true && e.project.createdBy.toLowerCase() === mine,
    ) ?? null;
  return {
    entries,
    groups: [...groups.values()].sort((a, b) => byName(a.name, b.name)),
    personal,
    truncated,
  };
}

export type AccessState = 'loading' | 'ready' | 'missing' | 'error';

export interface ProjectAccess {
  /** 'missing': the project the URL names is unknown or not yours to see (the API: 404). */
  state: AccessState;
  /** Why the projects could not be read ('error'). */
  error: unknown;
  /** The project the URL chooses (null: all projects). */
  projectId: string | null;
  /** Its entry, once known. */
  chosen: ProjectEntry | null;
  directory: ProjectDirectory;
  platformAdmin: boolean;
}

/** A role's rights in one project, with what the reasons for a refusal name. */
export interface Rights extends ProjectRights {
  role: OrgRole | null;
  /** The project's name (null when not known). */
  name: string | null;
  /** False when the console cannot tell the role (nothing is hidden then: the API decides). */
  known: boolean;
}

const EVERYTHING: Rights = { submit: true, act: true, manage: true, role: null, name: null, known: false };

function rightsOf(entry: ProjectEntry, platformAdmin: boolean): Rights {
  return { ...projectRights(entry.role, platformAdmin), role: entry.role, name: entry.project.name, known: true };
}

/** The project that acts: the one chosen, else (all projects) the personal default one. */
export function actingProject(access: ProjectAccess): ProjectEntry | null {
  return access.projectId ? access.chosen : access.directory.personal;
}

/**
 * Your rights in `projectId` (a row's project), or (undefined) in the project that acts. The
 * platform admin may do everything; a project the lists do not hold when they are complete is
 * not yours (no right); otherwise the console cannot tell and hides nothing.
 */
export function rightsIn(access: ProjectAccess | null, projectId?: string | null): Rights {
  if (!access || access.state === 'error') return EVERYTHING;
  const entry = projectId ? entryOf(access, projectId) : actingProject(access);
  if (access.platformAdmin) {
    const name = entry?.project.name ?? null;
    return { submit: true, act: true, manage: true, role: entry?.role ?? null, name, known: true };
  }
  if (entry) return rightsOf(entry, false);
  if (access.directory.truncated || !projectId) return EVERYTHING;
  return { submit: false, act: false, manage: false, role: null, name: null, known: true };
}

/** A project listed, or the one chosen when it was looked up by its id. */
function entryOf(access: ProjectAccess, projectId: string): ProjectEntry | null {
  return access.directory.entries.get(projectId) ?? (projectId === access.projectId ? access.chosen : null);
}

const ARTICLE: Record<OrgRole, string> = {
  owner: 'an owner',
  admin: 'an admin',
  member: 'a member',
  viewer: 'a viewer',
};

/**
 * Why `rights` do not allow `right`, naming the action: "You are a viewer in Web: submitting
 * jobs takes the member role or above."
 */
export function deniedReason(rights: Rights, right: keyof ProjectRights, action: string): string {
  const project = rights.name ?? 'this project';
  const needs = `${action} takes the ${LEAST_ROLE[right]} role or above.`;
  if (!rights.role) return `You are not a member of ${project}: ${needs}`;
  return `You are ${ARTICLE[rights.role]} in ${project}: ${needs}`;
}

export const ProjectAccessContext = createContext<ProjectAccess | null>(null);

/** The projects and roles of the user (null outside the app's layout, e.g. a page's component test). */
export function useProjectAccess(): ProjectAccess | null {
  return useContext(ProjectAccessContext);
}

/** Your rights in `projectId` (a row's project), or (no argument) in the project that acts. */
export function useRights(projectId?: string | null): Rights {
  return rightsIn(useProjectAccess(), projectId);
}
