/** Who may do what in an organization (docs/tenancy.md, "Roles"), as the console hides controls. */
import { isApiError } from '../api/client';
import { ORG_ROLES, type OrgRole } from '../api/types';

/** `role` is `least` or above it (owner > admin > member > viewer); null (not a member) is none. */
export function roleAtLeast(role: OrgRole | null | undefined, least: OrgRole): boolean {
  if (!role) return false;
  return ORG_ROLES.indexOf(role) <= ORG_ROLES.indexOf(least);
}

export interface OrgRights {
  /** Rename the organization, change its slug. */
  rename: boolean;
  /** Add members, change their roles, remove them. */
  manageMembers: boolean;
  /** Create, rename and delete projects (and manage their API keys). */
  manageProjects: boolean;
}

/** What your role in an organization lets you do; the platform admin may do what an owner may. */
export function orgRights(role: OrgRole | null | undefined, platformAdmin: boolean): OrgRights {
  const owner = platformAdmin || roleAtLeast(role, 'owner');
  return {
    rename: owner,
    manageMembers: owner,
    manageProjects: platformAdmin || roleAtLeast(role, 'admin'),
  };
}

/** What a role lets you do in a project (docs/tenancy.md, "Roles"): a project's role is its organization's. */
export interface ProjectRights {
  /** Submit jobs and batches. */
  submit: boolean;
  /** Retry, cancel, requeue, discard; bulk actions. */
  act: boolean;
  /** Create, pause, resume and delete schedules (and the project's API keys). */
  manage: boolean;
}

/** The least role each right takes. */
export const LEAST_ROLE: Record<keyof ProjectRights, OrgRole> = { submit: 'member', act: 'member', manage: 'admin' };

/** Your rights in a project from your role there; the platform admin may do what an owner may. */
export function projectRights(role: OrgRole | null | undefined, platformAdmin: boolean): ProjectRights {
  const at = (least: OrgRole) => platformAdmin || roleAtLeast(role, least);
  return { submit: at(LEAST_ROLE.submit), act: at(LEAST_ROLE.act), manage: at(LEAST_ROLE.manage) };
}

export const ROLE_LABELS: Record<OrgRole, string> = {
  owner: 'Owner',
  admin: 'Admin',
  member: 'Member',
  viewer: 'Viewer',
};

/**
 * An API error's per-field details under the form's own field paths (`name` -> `org.name`), so
 * that two forms on one page keep distinct control ids.
 */
export function prefixedFieldErrors(error: unknown, prefix: string): Record<string, string> {
  if (!isApiError(error)) return {};
  const out: Record<string, string> = {};
  for (const [field, message] of Object.entries(error.fieldErrors())) {
    out[`${prefix}.${field}`] = message;
  }
  return out;
}

/** The text above a form's field errors: the API's message, unless it only says "see the fields". */
export function formMessage(error: unknown, fallback: (e: unknown) => string): string | null {
  if (isApiError(error) && error.message === 'request validation failed' && error.details.length > 0) return null;
  return fallback(error);
}

/** Today's date as `<input type="date">` wants it (the browser's zone). */
export function todayInput(now: Date = new Date()): string {
  const pad = (n: number) => String(n).padStart(2, '0');
  return `${now.getFullYear()}-${pad(now.getMonth() + 1)}-${pad(now.getDate())}`;
}

/** An `<input type="date">` value -> the end of that day in the browser's zone, as ISO (UTC "Z"). */
export function endOfDayIso(value: string): string | null {
  if (!/^\d{4}-\d{2}-\d{2}$/.test(value)) return null;
  const date = new Date(`${value}T23:59:59`);
  return Number.isNaN(date.getTime()) ? null : date.toISOString();
}

/** How a key is named in listings: its prefix, never its secret (`jk_<prefix>_…`). */
export function maskedKey(prefix: string): string {
  return `jk_${prefix}_…`;
}
