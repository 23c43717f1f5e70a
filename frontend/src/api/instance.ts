/** The app's one auth store and API client, wired together. */
import { createAuthStore } from '../auth/store';
import { createApiClient } from './client';
import { requestProject } from './projectScope';
import type { TokenResponse } from './types';

export const api = createApiClient(
  {
    getToken: () => authStore.getState().session?.token ?? null,
    refresh: () => authStore.getState().refresh(),
    onUnauthorized: () => authStore.getState().logout('expired'),
  },
  undefined,
  requestProject,
);

export const authStore = createAuthStore({
  refreshRequest: (refreshToken) =>
    api.request<TokenResponse>('/auth/refresh', {
      method: 'POST',
      body: { refreshToken },
      auth: false,
    }),
  logoutRequest: (refreshToken) =>
    api.request('/auth/logout', {
      method: 'POST',
      body: { refreshToken },
      auth: false,
      // the request outlives a page that navigates away or closes right after "Log out"
      keepalive: true,
    }),
});
