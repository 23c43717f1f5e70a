/** X-Project: which requests say which project they act in, and which project (docs/tenancy.md). */
import { afterEach, describe, expect, it, vi } from 'vitest';
import { jsonResponse } from '../test/utils';
import { createApiClient, type AuthBinding } from './client';
import { inProject, requestProject, sendsProjectHeader, setChosenProject } from './projectScope';

function binding(): AuthBinding {
  let token = 'access-1';
  return {
    getToken: () => token,
    refresh: vi.fn(() => {
      token = 'access-2';
      return Promise.resolve(token);
    }),
    onUnauthorized: vi.fn(),
  };
}

function client(project: () => string | null, auth: AuthBinding = binding()) {
  const fetchImpl = vi.fn((_url: string, _init: RequestInit) => Promise.resolve(jsonResponse(200, {})));
  return { api: createApiClient(auth, fetchImpl, project), fetchImpl };
}

const headerOf = (init: RequestInit | undefined) => (init?.headers as Record<string, string> | undefined)?.['X-Project'];

describe('sendsProjectHeader', () => {
  it('names the project on every /api route but the organization and project ones', () => {
    for (const path of [
      '/api/jobs',
      '/api/jobs/abc?x=1',
      '/api/jobs/analytics/series',
      '/api/batches',
      '/api/dead-letters/bulk',
      '/api/schedules/s1/pause',
      '/api/job-types',
      '/api/queue-depths',
      '/api/queues',
      '/api/queues/q1/pause',
      '/api/projectsx', // another route that only starts alike
    ]) {
      expect(sendsProjectHeader(path), path).toBe(true);
    }
    for (const path of [
      '/auth/login',
      '/auth/refresh',
      '/api/organizations',
      '/api/organizations/o1/members?pageNumber=2',
      '/api/projects',
      '/api/projects?orgId=o1',
      '/api/projects/p1/api-keys',
      '/ws/events',
      '/api',
    ]) {
      expect(sendsProjectHeader(path), path).toBe(false);
    }
  });
});

describe('the API client and X-Project', () => {
  afterEach(() => setChosenProject(null));

  it('sends the project chosen with /api requests only, and nothing without one', async () => {
    let chosen: string | null = 'p-alpha';
    const { api, fetchImpl } = client(() => chosen);
    await api.request('/api/jobs');
    await api.request('/api/organizations');
    await api.request('/api/projects/p-alpha/api-keys', { method: 'POST', body: { name: 'CI', role: 'member' } });
    await api.request('/auth/logout', { method: 'POST', auth: false });
    await api.request('/api/api-key', { auth: false, headers: { 'X-API-Key': 'jk_x' } });
    chosen = null;
    await api.request('/api/jobs');
    expect(fetchImpl.mock.calls.map(([url, init]) => [url, headerOf(init)])).toEqual([
      ['/api/jobs', 'p-alpha'],
      ['/api/organizations', undefined],
      ['/api/projects/p-alpha/api-keys', undefined],
      ['/auth/logout', undefined],
      ['/api/api-key', undefined], // a call with another credential than the session names none
      ['/api/jobs', undefined],
    ]);
  });

  it('lets a request name its project, or none', async () => {
    const { api, fetchImpl } = client(() => 'p-alpha');
    await api.request('/api/jobs', { project: 'p-beta' });
    await api.request('/api/jobs', { project: null });
    expect(fetchImpl.mock.calls.map(([, init]) => headerOf(init))).toEqual(['p-beta', undefined]);
  });

  it('repeats a request after a refresh in the project it started in', async () => {
    let chosen: string | null = 'p-alpha';
    const auth = binding();
    const fetchImpl = vi.fn((_url: string, _init: RequestInit) => {
      chosen = 'p-beta'; // the user switched while the first answer was on its way
      return Promise.resolve(jsonResponse(200, {}));
    });
    fetchImpl.mockImplementationOnce(() => {
      chosen = 'p-beta';
      return Promise.resolve(jsonResponse(401, { error: 'unauthorized', message: 'expired' }));
    });
    const api = createApiClient(auth, fetchImpl, () => chosen);
    await api.request('/api/jobs');
    expect(fetchImpl.mock.calls.map(([, init]) => headerOf(init))).toEqual(['p-alpha', 'p-alpha']);
  });

  it('pins a project while a query starts its request, whatever is chosen', () => {
    setChosenProject('p-chosen');
    expect(requestProject()).toBe('p-chosen');
    const seen = inProject('p-key', () => [requestProject(), inProject(null, () => requestProject())]);
    expect(seen).toEqual(['p-key', null]);
    expect(requestProject()).toBe('p-chosen');
    expect(() =>
      inProject('p-key', () => {
        throw new Error('boom');
      }),
    ).toThrow('boom');
    expect(requestProject()).toBe('p-chosen');
  });
});
