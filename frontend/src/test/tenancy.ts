/** Organizations, members, projects and API keys as the API answers them (docs/tenancy.md). */
import type {
  ApiKeyCreated,
  ApiKeyOut,
  MemberOut,
  OrganizationOut,
  OrgRole,
  ProjectOut,
} from '../api/types';
import { buildDirectory, type ProjectAccess } from '../project/access';

export function page<T>(items: T[]) {
  return { items, pageNumber: 1, pageSize: 25, totalItems: items.length, totalPages: items.length ? 1 : 0 };
}

export function organization(overrides: Partial<OrganizationOut> = {}): OrganizationOut {
  return {
    id: '11111111-1111-4111-8111-111111111111',
    name: 'Acme Corp',
    slug: 'acme-corp',
    personal: false,
    createdAt: '2026-01-02T10:00:00Z',
    role: 'owner',
    ...overrides,
  };
}

export function member(email: string, role: MemberOut['role'], userId = `id-${email}`): MemberOut {
  return { userId, email, role, addedAt: '2026-01-03T10:00:00Z' };
}

export function project(overrides: Partial<ProjectOut> = {}): ProjectOut {
  return {
    id: '22222222-2222-4222-8222-222222222222',
    orgId: '11111111-1111-4111-8111-111111111111',
    name: 'Web',
    slug: 'web',
    createdBy: 'user@test.com',
    createdAt: '2026-01-04T10:00:00Z',
    personalDefault: false,
    ...overrides,
  };
}

export function apiKey(overrides: Partial<ApiKeyOut> = {}): ApiKeyOut {
  return {
    id: '33333333-3333-4333-8333-333333333333',
    projectId: '22222222-2222-4222-8222-222222222222',
    name: 'CI',
    role: 'member',
    prefix: 'abcd1234',
    createdBy: 'user@test.com',
    createdAt: '2026-01-05T10:00:00Z',
    expiresAt: null,
    lastUsedAt: null,
    revokedAt: null,
    revokedBy: null,
    ...overrides,
  };
}

export function createdKey(overrides: Partial<ApiKeyCreated> = {}): ApiKeyCreated {
  return { ...apiKey(overrides), key: 'jk_abcd1234_c2VjcmV0LXNlY3JldC1zZWNyZXQtc2VjcmV0', ...overrides };
}

// ---- a user's projects, as the layout provides them (src/project/access.ts) ----

export const ME = 'user@test.com';
export const PERSONAL_ORG = '44444444-4444-4444-8444-444444444444';
export const PERSONAL_PROJECT = '55555555-5555-4555-8555-555555555555';
export const TEAM_ORG = '66666666-6666-4666-8666-666666666666';
export const ALPHA = '77777777-7777-4777-8777-777777777777';
export const BETA = '88888888-8888-4888-8888-888888888888';

/** The user's organizations: their personal one (owner) and "Acme Corp" with `role` there. */
export function teamOrganizations(role: OrgRole | null): OrganizationOut[] {
  return [
    organization({ id: PERSONAL_ORG, name: ME, slug: 'user-abc123', personal: true, role: 'owner' }),
    organization({ id: TEAM_ORG, name: 'Acme Corp', slug: 'acme-corp', role }),
  ];
}

/** Their projects: "Default" (personal), "Alpha" and "Beta" (Acme Corp). */
export function teamProjects(): ProjectOut[] {
  return [
    project({ id: ALPHA, orgId: TEAM_ORG, name: 'Alpha', slug: 'alpha' }),
    project({ id: BETA, orgId: TEAM_ORG, name: 'Beta', slug: 'beta' }),
    project({ id: PERSONAL_PROJECT, orgId: PERSONAL_ORG, name: 'Default', slug: 'default', personalDefault: true, createdBy: ME }),
  ];
}

/**
 * What the layout provides to a user who is `role` in Acme Corp (the platform admin when
 * `platformAdmin`), with `projectId` chosen (null: all projects).
 */
export function teamAccess({
  role,
  projectId = null,
  platformAdmin = false,
}: {
  role: OrgRole | null;
  projectId?: string | null;
  platformAdmin?: boolean;
}): ProjectAccess {
  const directory = buildDirectory(teamOrganizations(role), teamProjects(), { email: ME });
  return {
    state: 'ready',
    error: null,
    projectId,
    chosen: projectId ? (directory.entries.get(projectId) ?? null) : null,
    directory,
    platformAdmin,
  };
}
