/**
 * The auth store: the session (access + refresh token, user) kept in sessionStorage, refreshed
 * shortly before the access token's `exp`, and ended by logout or a refused refresh.
 *
 * Refresh tokens rotate: each refresh uses up the token it sends and the answer carries the
 * next one, which replaces it at once. Presenting a used token again makes the server end the
 * whole session, so refreshes are single-flight: while one is under way every caller waits for
 * it, and none sends the same (soon old) token in parallel.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import { ApiError } from '../api/client';
import type { TokenResponse, UserPublic } from '../api/types';
import { tokenExpiresAt } from './jwt';

export interface Session {
  token: string;
  refreshToken: string;
  user: UserPublic;
  /** Access token expiry, epoch ms. */
  expiresAt: number;
}

export type LogoutReason = 'user' | 'expired';

export interface AuthState {
  session: Session | null;
  /** Why the last session ended (shown on the login page). */
  endedBecause: LogoutReason | null;
  login(tokens: TokenResponse): void;
  /**
   * End the session. A user's logout first sends POST /auth/logout with the refresh token (so
   * the server revokes the session even if this tab is gone), then clears the local state.
   */
  logout(reason?: LogoutReason): void;
  /** Refresh now (single flight). Resolves to the new access token, null if the session ended. */
  refresh(): Promise<string | null>;
}

export interface AuthStoreOptions {
  /** POST /auth/refresh without auth handling (the store must not depend on the API client). */
  refreshRequest(refreshToken: string): Promise<TokenResponse>;
  /** POST /auth/logout: revoke the session of this refresh token on the server. */
  logoutRequest?(refreshToken: string): Promise<unknown>;
  storage?: Pick<Storage, 'getItem' | 'setItem' | 'removeItem'> | null;
  /** Refresh this long before the access token expires. */
  refreshMarginMs?: number;
  /** After a refresh that failed for another reason than 401, try again after this long. */
  retryDelayMs?: number;
}

export const STORAGE_KEY = 'jobs.session';
export const DEFAULT_REFRESH_MARGIN_MS = 60_000;

function sessionFrom(tokens: TokenResponse, now: number): Session {
  return {
    token: tokens.token,
    refreshToken: tokens.refreshToken,
    user: tokens.user,
    expiresAt: tokenExpiresAt(tokens.token) ?? now + tokens.expiresIn * 1000,
  };
}

function readStored(storage: AuthStoreOptions['storage']): Session | null {
  if (!storage) return null;
  try {
    const raw = storage.getItem(STORAGE_KEY);
    if (!raw) return null;
    const value = JSON.parse(raw) as Partial<Session>;
    if (
      typeof value.token === 'string' &&
      typeof value.refreshToken === 'string' &&
      typeof value.expiresAt === 'number' &&
      typeof value.user?.email === 'string'
    ) {
      return value as Session;
    }
  } catch {
    /* unreadable: start logged out */
  }
  return null;
}

export type AuthStore = StoreApi<AuthState>;

export function createAuthStore(options: AuthStoreOptions): AuthStore {
  const storage =
    options.storage === undefined
      ? typeof sessionStorage === 'undefined'
        ? null
        : sessionStorage
      : options.storage;
  const margin = options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS;
  const retryDelay = options.retryDelayMs ?? 15_000;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let inFlight: Promise<string | null> | null = null;

  const clearTimer = () => {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  };

  const persist = (session: Session | null) => {
    if (!storage) return;
    try {
      if (session) storage.setItem(STORAGE_KEY, JSON.stringify(session));
      else storage.removeItem(STORAGE_KEY);
    } catch {
      /* storage full or disabled: the session still lives in memory */
    }
  };

  const store = createStore<AuthState>()((set, get) => {
    const schedule = (session: Session, delay?: number) => {
      clearTimer();
      const wait = delay ?? Math.max(0, session.expiresAt - margin - Date.now());
      timer = setTimeout(() => {
        timer = null;
        void get().refresh();
      }, wait);
    };

    const doRefresh = async (): Promise<string | null> => {
      const current = get().session;
      if (!current) return null;
      try {
        const tokens = await options.refreshRequest(current.refreshToken);
        if (get().session?.refreshToken !== current.refreshToken) {
          // logged out (or in again) meanwhile: do not resurrect the old session
          return get().session?.token ?? null;
        }
        const next = sessionFrom(tokens, Date.now());
        persist(next);
        set({ session: next });
        schedule(next);
        return next.token;
      } catch (error) {
        if (error instanceof ApiError && (error.status === 401 || error.status === 403)) {
          get().logout('expired');
          return null;
        }
        // network or server trouble: keep the session while the access token lasts
        const still = get().session;
        if (still && still.expiresAt > Date.now()) {
          schedule(still, retryDelay);
          return null;
        }
        get().logout('expired');
        return null;
      }
    };

    return {
      session: null,
      endedBecause: null,
      login(tokens) {
        const session = sessionFrom(tokens, Date.now());
        persist(session);
        set({ session, endedBecause: null });
        schedule(session);
      },
      logout(reason = 'user') {
        clearTimer();
        const ending = get().session;
        if (reason === 'user' && ending && options.logoutRequest) {
          // Sent before the local state goes; a failure (offline) must not keep the user in.
          options.logoutRequest(ending.refreshToken).catch(() => undefined);
        }
        persist(null);
        if (get().session !== null || get().endedBecause !== reason) {
          set({ session: null, endedBecause: reason });
        }
      },
      refresh() {
        inFlight ??= doRefresh().finally(() => {
          inFlight = null;
        });
        return inFlight;
      },
    };
  });

  // Restore a session of this tab (sessionStorage) and plan its refresh.
  const restored = readStored(storage);
  if (restored) {
    const refreshExpiry = tokenExpiresAt(restored.refreshToken);
    if (refreshExpiry !== null && refreshExpiry <= Date.now()) {
      persist(null);
    } else {
      store.setState({ session: restored });
      const wait = Math.max(0, restored.expiresAt - margin - Date.now());
      timer = setTimeout(() => {
        timer = null;
        void store.getState().refresh();
      }, wait);
    }
  }

  return store;
}
