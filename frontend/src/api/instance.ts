/** The app's one auth store and API client, wired together. */
import { sessionRequests } from '../auth/requests';
import { createAuthStore } from '../auth/store';
import { browserHintStorage, browserLock, browserTabChannel } from '../auth/tabs';
import { createApiClient } from './client';
import { requestProject } from './projectScope';

export const api = createApiClient(
  {
    getToken: () => authStore.getState().session?.token ?? null,
    refresh: () => authStore.getState().refresh(),
    onUnauthorized: () => authStore.getState().logout('expired'),
  },
  undefined,
  requestProject,
);

export const session = sessionRequests(api);

// Tokens of earlier versions of the console, kept in this tab's storage (readable by any
// script): the session is in the gateway's HttpOnly cookie now.
try {
  sessionStorage.removeItem('jobs.session');
} catch {
  /* no storage */
}

export const authStore = createAuthStore({
  refreshRequest: () => session.refresh(),
  logoutRequest: () => session.logOut(),
  tabs: browserTabChannel(),
  exclusive: browserLock(),
  storage: browserHintStorage(),
});
