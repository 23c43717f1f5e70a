import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { endOfDayIso, maskedKey, orgRights, prefixedFieldErrors, roleAtLeast, todayInput } from './tenancy';

describe('tenancy helpers', () => {
  it('orders the roles owner > admin > member > viewer; not a member is none', () => {
    expect(roleAtLeast('owner', 'admin')).toBe(true);
    expect(roleAtLeast('admin', 'admin')).toBe(true);
    expect(roleAtLeast('member', 'admin')).toBe(false);
    expect(roleAtLeast('viewer', 'viewer')).toBe(true);
    expect(roleAtLeast(null, 'viewer')).toBe(false);
  });

  it('gives the rights of docs/tenancy.md; the platform admin those of an owner', () => {
    expect(orgRights('owner', false)).toEqual({ rename: true, manageMembers: true, manageProjects: true });
    expect(orgRights('admin', false)).toEqual({ rename: false, manageMembers: false, manageProjects: true });
    expect(orgRights('member', false)).toEqual({ rename: false, manageMembers: false, manageProjects: false });
    expect(orgRights('viewer', false)).toEqual({ rename: false, manageMembers: false, manageProjects: false });
    expect(orgRights(null, true)).toEqual({ rename: true, manageMembers: true, manageProjects: true });
  });

  it('puts API field errors under the form prefix', () => {
    const error = new ApiError(422, 'validation_error', 'request validation failed', [
      { field: 'name', message: 'must not be blank' },
    ]);
    expect(prefixedFieldErrors(error, 'project')).toEqual({ 'project.name': 'must not be blank' });
    expect(prefixedFieldErrors(new Error('x'), 'project')).toEqual({});
  });

  it('turns a date input into the end of that local day, and masks a key by its prefix', () => {
    const iso = endOfDayIso('2030-06-15')!;
    const local = new Date(iso);
    expect([local.getFullYear(), local.getMonth(), local.getDate(), local.getHours(), local.getMinutes()]).toEqual([
      2030, 5, 15, 23, 59,
    ]);
    expect(endOfDayIso('')).toBeNull();
    expect(endOfDayIso('15/06/2030')).toBeNull();
    expect(todayInput(new Date(2030, 0, 5))).toBe('2030-01-05');
    expect(maskedKey('abcd1234')).toBe('jk_abcd1234_…');
  });
});
