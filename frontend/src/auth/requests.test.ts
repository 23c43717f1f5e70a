import { describe, expect, it, vi } from 'vitest';
import { createApiClient } from '../api/client';
import { fakeTokens, jsonResponse } from '../test/utils';
import { sessionRequests } from './requests';

describe('the session requests', () => {
  it('opt into the session cookie and never send a token of their own', async () => {
    const tokens = { ...fakeTokens(), refreshToken: null };
    const fetchImpl = vi.fn((_url: string, _init: RequestInit) => Promise.resolve(jsonResponse(200, tokens)));
    const auth = { getToken: () => 'access-1', refresh: vi.fn(), onUnauthorized: vi.fn() };
    const requests = sessionRequests(createApiClient(auth, fetchImpl));
    await expect(requests.logIn('user@test.com', 'user123')).resolves.toEqual(tokens);
    await requests.refresh();
    await requests.logOut();
    const sent = fetchImpl.mock.calls.map(([url, init]) => ({
      url,
      method: init.method,
      body: init.body,
      cookieMode: (init.headers as Record<string, string>)['X-Session-Cookie'],
      authorization: (init.headers as Record<string, string>).Authorization,
      keepalive: init.keepalive ?? false,
    }));
    expect(sent).toEqual([
      {
        url: '/auth/login',
        method: 'POST',
        body: '{"email":"user@test.com","password":"user123"}',
        cookieMode: '1',
        authorization: undefined,
        keepalive: false,
      },
      { url: '/auth/refresh', method: 'POST', body: undefined, cookieMode: '1', authorization: undefined, keepalive: false },
      { url: '/auth/logout', method: 'POST', body: undefined, cookieMode: '1', authorization: undefined, keepalive: true },
    ]);
  });
});
