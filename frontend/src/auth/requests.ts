/**
 * The console's session requests. Each sends `X-Session-Cookie: 1`: the gateway then keeps the
 * refresh token in its HttpOnly cookie (Path=/auth, SameSite=Strict) instead of the JSON body,
 * so no script on the page ever holds it (docs/security.md, "Sessions").
 */
import type { ApiClient } from '../api/client';
import type { TokenResponse } from '../api/types';

export const SESSION_COOKIE_HEADER = 'X-Session-Cookie';
const COOKIE_MODE = { [SESSION_COOKIE_HEADER]: '1' };

export interface SessionRequests {
  /** POST /auth/login: the access token; the session is in the cookie. */
  logIn(email: string, password: string): Promise<TokenResponse>;
  /** POST /auth/refresh with the cookie: the next access token; the cookie rotates. */
  refresh(): Promise<TokenResponse>;
  /** POST /auth/logout with the cookie: the session revoked, the cookie cleared. */
  logOut(): Promise<unknown>;
}

export function sessionRequests(client: ApiClient): SessionRequests {
  return {
    logIn: (email, password) =>
      client.request('/auth/login', { method: 'POST', body: { email, password }, headers: COOKIE_MODE, auth: false }),
    refresh: () => client.request('/auth/refresh', { method: 'POST', headers: COOKIE_MODE, auth: false }),
    logOut: () =>
      client.request('/auth/logout', {
        method: 'POST',
        headers: COOKIE_MODE,
        auth: false,
        // the request outlives a page that navigates away or closes right after "Log out"
        keepalive: true,
      }),
  };
}
