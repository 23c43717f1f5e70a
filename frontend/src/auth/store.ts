/**
 * The auth store: the session of this tab (the access token, in memory only, and the user),
 * refreshed shortly before the access token's `exp`, and ended by logout or a refused refresh.
 *
 * The refresh token never reaches a script: the gateway keeps it in an HttpOnly cookie
 * (`X-Session-Cookie: 1`, docs/security.md "Sessions"), so a new tab or a reload gets its
 * access token from one refresh. The tabs of the browser share one cookie, and each refresh
 * uses it up (presenting a used one again makes the server end the whole session), so
 * refreshes are single-flight within a tab and take turns across tabs (./tabs.ts): a tab that
 * waited its turn and meanwhile heard a newer access token from another tab uses that one
 * instead of refreshing again. A logout, or a session the server refused, ends every tab.
 */
import { createStore, type StoreApi } from 'zustand/vanilla';
import { ApiError } from '../api/client';
import type { TokenResponse } from '../api/types';
import { tokenExpiresAt } from './jwt';
import {
  HINT_KEY,
  type EndReason,
  type Exclusive,
  type HintStorage,
  type SharedSession,
  type TabChannel,
} from './tabs';

export type Session = SharedSession;
export type LogoutReason = EndReason;

export interface AuthState {
  session: Session | null;
  /** A new tab or a reload is asking the gateway for the session of the cookie. */
  restoring: boolean;
  /** Why the last session ended (shown on the login page). */
  endedBecause: LogoutReason | null;
  login(tokens: TokenResponse): void;
  /**
   * End the session in every tab. A user's logout sends POST /auth/logout (the server revokes
   * the session and clears the cookie, even if this tab is gone by then).
   */
  logout(reason?: LogoutReason): void;
  /** Refresh now (single flight). Resolves to the new access token, null if the session ended. */
  refresh(): Promise<string | null>;
}

export interface AuthStoreOptions {
  /** POST /auth/refresh with the session cookie, without auth handling. */
  refreshRequest(): Promise<TokenResponse>;
  /** POST /auth/logout with the session cookie: revoke the session, clear the cookie. */
  logoutRequest?(): Promise<unknown>;
  /** The other tabs (./tabs.ts `browserTabChannel`); none by default. */
  tabs?: TabChannel | null;
  /** One refresh at a time across tabs (./tabs.ts `browserLock`); by default none is needed. */
  exclusive?: Exclusive | null;
  /** Where "a session may exist in this browser" is noted (localStorage); nowhere by default. */
  storage?: HintStorage | null;
  /** Refresh this long before the access token expires. */
  refreshMarginMs?: number;
  /** After a refresh that failed for another reason than 401, try again after this long. */
  retryDelayMs?: number;
}

export const DEFAULT_REFRESH_MARGIN_MS = 60_000;

function sessionFrom(tokens: TokenResponse, now: number): Session {
  return {
    token: tokens.token,
    user: tokens.user,
    expiresAt: tokenExpiresAt(tokens.token) ?? now + tokens.expiresIn * 1000,
  };
}

function refused(error: unknown): boolean {
  return error instanceof ApiError && (error.status === 401 || error.status === 403);
}

export type AuthStore = StoreApi<AuthState>;

export function createAuthStore(options: AuthStoreOptions): AuthStore {
  const tabs = options.tabs ?? null;
  const exclusive: Exclusive = options.exclusive ?? ((run) => run());
  const hint = options.storage ?? null;
  const margin = options.refreshMarginMs ?? DEFAULT_REFRESH_MARGIN_MS;
  const retryDelay = options.retryDelayMs ?? 15_000;
  let timer: ReturnType<typeof setTimeout> | null = null;
  let inFlight: Promise<string | null> | null = null;
  // Bumped when a session starts or ends: a refresh answered after that is not applied.
  let epoch = 0;

  const store = createStore<AuthState>()(() => ({
    session: null,
    restoring: false,
    endedBecause: null,
    login(tokens) {
      adopt(sessionFrom(tokens, Date.now()), true);
    },
    logout(reason = 'user') {
      if (reason === 'user' && get().session !== null && options.logoutRequest) {
        // Sent before the local state goes; a failure (offline) must not keep the user in.
        options.logoutRequest().catch(() => undefined);
      }
      end(reason, true);
    },
    refresh() {
      inFlight ??= refreshInTurn().finally(() => {
        inFlight = null;
      });
      return inFlight;
    },
  }));
  const get = store.getState;
  const set = store.setState;

  function clearTimer() {
    if (timer !== null) clearTimeout(timer);
    timer = null;
  }

  function schedule(session: Session, delay?: number) {
    clearTimer();
    const wait = delay ?? Math.max(0, session.expiresAt - margin - Date.now());
    timer = setTimeout(() => {
      timer = null;
      void get().refresh();
    }, wait);
  }

  function noteHint(present: boolean) {
    try {
      if (present) hint?.setItem(HINT_KEY, '1');
      else hint?.removeItem(HINT_KEY);
    } catch {
      /* storage full or disabled: a new tab then starts at the login page */
    }
  }

  /** A new session here, from this tab's login or refresh (`tell`: the others too) or another tab's. */
  function adopt(session: Session, tell: boolean) {
    epoch += 1;
    set({ session, restoring: false, endedBecause: null });
    schedule(session);
    if (tell) {
      noteHint(true);
      tabs?.post({ type: 'session', session });
    }
  }

  /** End the session here (`tell`: in the other tabs too). */
  function end(reason: LogoutReason, tell: boolean) {
    clearTimer();
    epoch += 1;
    const had = get().session !== null || get().restoring;
    if (tell) {
      noteHint(false);
      if (had) tabs?.post({ type: 'ended', reason });
    }
    if (had || get().endedBecause !== reason) {
      set({ session: null, restoring: false, endedBecause: reason });
    }
  }

  /** One refresh, in this browser's turn (no other tab refreshes meanwhile). */
  async function refreshInTurn(): Promise<string | null> {
    const before = get().session?.token ?? null;
    return exclusive(async () => {
      const current = get().session;
      if (current && current.token !== before) return current.token; // another tab's turn did it
      if (!current && !get().restoring) return null; // ended while waiting
      const started = epoch;
      try {
        const tokens = await options.refreshRequest();
        if (epoch !== started) return get().session?.token ?? null; // ended or replaced meanwhile
        const next = sessionFrom(tokens, Date.now());
        adopt(next, true);
        return next.token;
      } catch (error) {
        if (epoch !== started) return get().session?.token ?? null;
        if (refused(error)) {
          end('expired', true);
          return null;
        }
        // network or server trouble: keep the session while the access token lasts
        const still = get().session;
        if (still && still.expiresAt > Date.now()) schedule(still, retryDelay);
        else if (still) end('expired', false);
        else set({ restoring: false }); // to the login page; the next load asks again
        return null;
      }
    });
  }

  tabs?.subscribe((message) => {
    if (message.type === 'session') adopt(message.session, false);
    else end(message.reason, false);
  });

  // A new tab or a reload: ask for the session of the cookie, if this browser may have one.
  let noted = false;
  try {
    noted = hint?.getItem(HINT_KEY) === '1';
  } catch {
    noted = false;
  }
  if (noted) {
    set({ restoring: true });
    void get().refresh();
  }

  return store;
}
