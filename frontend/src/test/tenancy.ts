/** Organizations, members, projects and API keys as the API answers them (docs/tenancy.md). */
import type {
  ApiKeyCreated,
  ApiKeyOut,
  MemberOut,
  OrganizationOut,
  ProjectOut,
} from '../api/types';

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
