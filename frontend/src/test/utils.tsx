import { QueryClient, QueryClientProvider } from '@tanstack/react-query';
import { render, type RenderResult } from '@testing-library/react';
import axe from 'axe-core';
import type { ReactElement } from 'react';
import { MemoryRouter, Route, Routes, useLocation } from 'react-router';
import type { TokenResponse } from '../api/types';
import { ProjectAccessContext, type ProjectAccess } from '../project/access';

function base64Url(value: object): string {
  return btoa(JSON.stringify(value)).replace(/\+/g, '-').replace(/\//g, '_').replace(/=+$/, '');
}

/** An unsigned JWT-shaped token with the given claims (the UI only reads them). */
export function fakeJwt(claims: Record<string, unknown>): string {
  return `${base64Url({ alg: 'HS256', typ: 'JWT' })}.${base64Url(claims)}.signature`;
}

export function fakeTokens(options: {
  email?: string;
  role?: 'admin' | 'user';
  expiresInSeconds?: number;
  now?: number;
  tag?: string;
} = {}): TokenResponse {
  const now = Math.floor((options.now ?? Date.now()) / 1000);
  const ttl = options.expiresInSeconds ?? 3600;
  const email = options.email ?? 'user@test.com';
  const role = options.role ?? 'user';
  return {
    token: fakeJwt({ sub: 'u1', email, role, typ: 'access', iat: now, exp: now + ttl, tag: options.tag }),
    refreshToken: fakeJwt({ sub: 'u1', email, role, typ: 'refresh', iat: now, exp: now + 7 * 86400, tag: options.tag }),
    tokenType: 'bearer',
    expiresIn: ttl,
    user: { id: 'u1', email, role },
  };
}

export function testQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: { queries: { retry: false, gcTime: Infinity }, mutations: { retry: false } },
  });
}

/** Shows the router's current location (for assertions on the URL). */
export function LocationProbe() {
  const location = useLocation();
  return <output data-testid="location">{`${location.pathname}${location.search}`}</output>;
}

/**
 * `ui` at `route` (matched by `path`) with a query client and, when given, the user's projects
 * and roles (`access`, as the layout provides them: test/tenancy.ts `teamAccess`); without
 * `access` a page hides nothing (as outside the layout).
 */
export function renderWithProviders(
  ui: ReactElement,
  {
    route = '/',
    path = '*',
    client = testQueryClient(),
    access,
  }: { route?: string; path?: string; client?: QueryClient; access?: ProjectAccess } = {},
): RenderResult & { client: QueryClient } {
  const page = (
    <>
      {ui}
      <LocationProbe />
    </>
  );
  const result = render(
    <QueryClientProvider client={client}>
      <MemoryRouter initialEntries={[route]}>
        <Routes>
          <Route
            path={path}
            element={access ? <ProjectAccessContext.Provider value={access}>{page}</ProjectAccessContext.Provider> : page}
          />
        </Routes>
      </MemoryRouter>
    </QueryClientProvider>,
  );
  return { ...result, client };
}

/** axe-core violations of impact serious or critical (colour contrast needs a real browser). */
export async function seriousViolations(container: Element): Promise<string[]> {
  const result = await axe.run(container, {
    rules: { 'color-contrast': { enabled: false }, region: { enabled: false } },
  });
  return result.violations
    .filter((v) => v.impact === 'serious' || v.impact === 'critical')
    .map((v) => `${v.id}: ${v.help} (${v.nodes.map((n) => n.target.join(' ')).join(', ')})`);
}

export function jsonResponse(status: number, body: unknown, init: ResponseInit = {}): Response {
  return new Response(body === undefined ? null : JSON.stringify(body), {
    status,
    headers: { 'Content-Type': 'application/json' },
    ...init,
  });
}
