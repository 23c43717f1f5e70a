import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/client';
import type { TokenResponse } from '../api/types';
import { fakeTokens } from '../test/utils';
import { createAuthStore, type AuthStoreOptions } from './store';
import { HINT_KEY, readTabMessage, type Exclusive, type TabChannel, type TabMessage } from './tabs';

const NOW = new Date('2030-01-01T12:00:00Z').getTime();

function memoryStorage() {
  const data = new Map<string, string>();
  return {
    data,
    getItem: (key: string) => data.get(key) ?? null,
    setItem: (key: string, value: string) => void data.set(key, value),
    removeItem: (key: string) => void data.delete(key),
  };
}

/** The tabs of one browser: what one posts reaches the others a moment later, never itself. */
function browserTabs() {
  const listeners = new Set<(message: TabMessage) => void>();
  const sent: TabMessage[] = [];
  return {
    sent,
    channel(): TabChannel {
      let own: ((message: TabMessage) => void) | null = null;
      return {
        post(message) {
          sent.push(message);
          for (const listener of listeners) {
            if (listener !== own) queueMicrotask(() => listener(structuredClone(message)));
          }
        },
        subscribe(listener) {
          own = listener;
          listeners.add(listener);
          return () => listeners.delete(listener);
        },
      };
    },
  };
}

/** One lock shared by the tabs (what Web Locks give a browser). */
function sharedLock(): Exclusive {
  let tail: Promise<unknown> = Promise.resolve();
  return <T>(run: () => Promise<T>) => {
    const result = tail.then(run);
    tail = result.catch(() => undefined);
    return result;
  };
}

/**
 * The gateway's side of the cookie: each refresh uses the cookie the browser holds when the
 * request leaves and rotates it when the answer arrives; a used cookie presented again ends the
 * session (reuse detection), as `gateway.refresh_tokens` does.
 */
function cookieGateway() {
  let cookie = 0;
  const used = new Set<number>();
  const gateway = {
    revoked: false,
    presented: [] as number[],
    refreshRequest: vi.fn(async (): Promise<TokenResponse> => {
      const sent = cookie;
      gateway.presented.push(sent);
      await Promise.resolve(); // in flight
      await Promise.resolve();
      if (gateway.revoked || used.has(sent)) {
        gateway.revoked = true;
        throw new ApiError(401, 'unauthorized', 'invalid token');
      }
      used.add(sent);
      cookie += 1;
      return fakeTokens({ now: Date.now(), tag: `c${cookie}` });
    }),
  };
  return gateway;
}

function tab(overrides: Partial<AuthStoreOptions> = {}) {
  return createAuthStore({ refreshRequest: vi.fn(), storage: memoryStorage(), ...overrides });
}

describe('auth store', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps the access token in memory only and notes in storage that a session exists', () => {
    const storage = memoryStorage();
    const store = tab({ storage });
    const tokens = fakeTokens({ expiresInSeconds: 600, now: NOW });
    store.getState().login({ ...tokens, refreshToken: null });
    const session = store.getState().session;
    expect(session).toEqual({ token: tokens.token, user: tokens.user, expiresAt: NOW + 600_000 });
    expect([...storage.data]).toEqual([[HINT_KEY, '1']]); // nothing secret
  });

  it('refreshes one minute before the access token expires, and again after that', async () => {
    const refreshRequest = vi.fn(() =>
      Promise.resolve(fakeTokens({ expiresInSeconds: 600, now: Date.now(), tag: String(Date.now()) })),
    );
    const store = tab({ refreshRequest });
    store.getState().login(fakeTokens({ expiresInSeconds: 600, now: NOW }));

    await vi.advanceTimersByTimeAsync(600_000 - 60_000 - 1);
    expect(refreshRequest).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(refreshRequest).toHaveBeenCalledTimes(1);
    expect(store.getState().session?.expiresAt).toBe(Date.now() + 600_000);

    await vi.advanceTimersByTimeAsync(540_000);
    expect(refreshRequest).toHaveBeenCalledTimes(2);
  });

  it('runs concurrent refreshes of a tab as one request', async () => {
    let resolve: (value: TokenResponse) => void = () => undefined;
    const refreshRequest = vi.fn(() => new Promise<TokenResponse>((r) => (resolve = r)));
    const store = tab({ refreshRequest });
    store.getState().login(fakeTokens({ now: NOW }));
    const scheduled = store.getState().refresh(); // e.g. the timer
    const onUnauthorized = store.getState().refresh(); // e.g. a request's 401
    await vi.advanceTimersByTimeAsync(0);
    expect(refreshRequest).toHaveBeenCalledTimes(1);
    const next = fakeTokens({ now: NOW, tag: 'next' });
    resolve(next);
    await expect(scheduled).resolves.toBe(next.token);
    await expect(onUnauthorized).resolves.toBe(next.token);
  });

  it('ends the session in every tab when the refresh is refused', async () => {
    const tabs = browserTabs();
    const storage = memoryStorage();
    const refreshRequest = vi.fn(() => Promise.reject(new ApiError(401, 'unauthorized', 'invalid token')));
    const store = tab({ refreshRequest, storage, tabs: tabs.channel() });
    const other = tab({ tabs: tabs.channel() });
    store.getState().login(fakeTokens({ now: NOW }));
    await vi.advanceTimersByTimeAsync(0);
    expect(other.getState().session).not.toBeNull();
    await expect(store.getState().refresh()).resolves.toBeNull();
    await vi.advanceTimersByTimeAsync(0);
    for (const each of [store, other]) {
      expect(each.getState()).toMatchObject({ session: null, endedBecause: 'expired' });
    }
    expect(storage.data.has(HINT_KEY)).toBe(false);
  });

  it('keeps the session on a network failure and tries again later', async () => {
    const refreshRequest = vi
      .fn(() => Promise.resolve(fakeTokens({ now: Date.now(), tag: 'later' })))
      .mockRejectedValueOnce(new ApiError(0, 'network_error', 'offline'));
    const store = tab({ refreshRequest, retryDelayMs: 15_000 });
    store.getState().login(fakeTokens({ expiresInSeconds: 600, now: NOW }));
    await vi.advanceTimersByTimeAsync(540_000);
    expect(refreshRequest).toHaveBeenCalledTimes(1);
    expect(store.getState().session).not.toBeNull();
    await vi.advanceTimersByTimeAsync(15_000);
    expect(refreshRequest).toHaveBeenCalledTimes(2);
    expect(store.getState().session?.expiresAt).toBe(Date.now() + 3_600_000);
  });

  it("a user's logout asks the server to end the session, then ends it in every tab", async () => {
    const tabs = browserTabs();
    const storage = memoryStorage();
    const seen: boolean[] = [];
    const otherLogout = vi.fn(() => Promise.resolve());
    const store = tab({
      storage,
      tabs: tabs.channel(),
      logoutRequest: () => {
        seen.push(store.getState().session !== null);
        return Promise.resolve();
      },
    });
    const other = tab({ tabs: tabs.channel(), logoutRequest: otherLogout });
    store.getState().login(fakeTokens({ expiresInSeconds: 120, now: NOW }));
    await vi.advanceTimersByTimeAsync(0);
    store.getState().logout('user');
    expect(seen).toEqual([true]); // sent while the session was still there
    await vi.advanceTimersByTimeAsync(0);
    for (const each of [store, other]) {
      expect(each.getState()).toMatchObject({ session: null, endedBecause: 'user' });
    }
    expect(otherLogout).not.toHaveBeenCalled(); // one tab tells the server
    expect(storage.data.has(HINT_KEY)).toBe(false);
    store.getState().logout('user'); // nothing left to end
    expect(seen).toHaveLength(1);
    expect(tabs.sent.filter((m) => m.type === 'ended')).toHaveLength(1);
  });

  it('logs out locally even when the server cannot be reached, and calls it not on expiry', async () => {
    const logoutRequest = vi.fn(() => Promise.reject(new ApiError(0, 'network_error', 'offline')));
    const refreshRequest = vi.fn(() => Promise.resolve(fakeTokens()));
    const store = tab({ refreshRequest, logoutRequest });
    store.getState().login(fakeTokens({ expiresInSeconds: 120, now: NOW }));
    store.getState().logout('user');
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(store.getState().session).toBeNull();
    expect(logoutRequest).toHaveBeenCalledTimes(1);
    expect(refreshRequest).not.toHaveBeenCalled(); // the planned refresh is cancelled
    store.getState().login(fakeTokens({ now: Date.now() }));
    store.getState().logout('expired'); // the server refused the session already
    expect(logoutRequest).toHaveBeenCalledTimes(1);
  });

  it('a login in one tab takes the tabs at the login page in too', async () => {
    const tabs = browserTabs();
    const store = tab({ tabs: tabs.channel() });
    const other = tab({ tabs: tabs.channel() });
    other.getState().logout('user');
    const tokens = fakeTokens({ now: NOW, email: 'admin@test.com' });
    store.getState().login(tokens);
    await vi.advanceTimersByTimeAsync(0);
    expect(other.getState()).toMatchObject({ endedBecause: null, session: { token: tokens.token } });
  });

  it('a new tab or a reload gets its session from one refresh with the cookie', async () => {
    const storage = memoryStorage();
    storage.setItem(HINT_KEY, '1');
    const refreshRequest = vi.fn(() => Promise.resolve(fakeTokens({ now: NOW, tag: 'restored' })));
    const store = tab({ refreshRequest, storage });
    expect(store.getState()).toMatchObject({ restoring: true, session: null });
    await vi.advanceTimersByTimeAsync(0);
    expect(refreshRequest).toHaveBeenCalledTimes(1);
    expect(store.getState()).toMatchObject({ restoring: false, endedBecause: null });
    expect(store.getState().session?.expiresAt).toBe(NOW + 3_600_000);
  });

  it('a visit without a session in this browser sends nothing', async () => {
    const refreshRequest = vi.fn(() => Promise.resolve(fakeTokens()));
    const store = tab({ refreshRequest });
    expect(store.getState().restoring).toBe(false);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(refreshRequest).not.toHaveBeenCalled();
  });

  it('a refused cookie at load ends at the login page; an unreachable server keeps the note', async () => {
    for (const [error, ended, kept] of [
      [new ApiError(401, 'unauthorized', 'invalid token'), 'expired', false],
      [new ApiError(0, 'network_error', 'offline'), null, true],
    ] as const) {
      const storage = memoryStorage();
      storage.setItem(HINT_KEY, '1');
      const store = tab({ refreshRequest: vi.fn(() => Promise.reject(error)), storage });
      await vi.advanceTimersByTimeAsync(0);
      expect(store.getState()).toMatchObject({ restoring: false, session: null, endedBecause: ended });
      expect(storage.data.has(HINT_KEY)).toBe(kept);
    }
  });

  it('tabs refreshing at once take turns, so the gateway never sees a cookie twice', async () => {
    const gateway = cookieGateway();
    const tabs = browserTabs();
    const lock = sharedLock();
    const [a, b, c] = [0, 1, 2].map(() =>
      tab({ refreshRequest: gateway.refreshRequest, tabs: tabs.channel(), exclusive: lock }),
    );
    a!.getState().login(fakeTokens({ now: NOW, tag: 'login' }));
    await vi.advanceTimersByTimeAsync(0);
    // a reload of one tab and the timers of the others, at the same moment
    await Promise.all([a!, b!, c!].map((each) => each.getState().refresh()));
    await vi.advanceTimersByTimeAsync(0);
    expect(gateway.revoked).toBe(false);
    expect(new Set(gateway.presented).size).toBe(gateway.presented.length);
    const tokens = [a!, b!, c!].map((each) => each.getState().session?.token);
    expect(tokens.every((token) => token !== undefined)).toBe(true);
    expect(new Set(tokens).size).toBe(1); // the tabs that waited use what the first one got
  });

  it('without taking turns the same race would present one cookie twice (the failure the lock prevents)', async () => {
    const gateway = cookieGateway();
    const [a, b] = [tab({ refreshRequest: gateway.refreshRequest }), tab({ refreshRequest: gateway.refreshRequest })];
    a.getState().login(fakeTokens({ now: NOW }));
    b.getState().login(fakeTokens({ now: NOW }));
    await Promise.all([a.getState().refresh(), b.getState().refresh()]);
    expect(gateway.revoked).toBe(true);
  });

  it('reads only well-formed messages of other tabs', () => {
    const session = { token: 't', user: { id: 'u1', email: 'a@b.c', role: 'user' }, expiresAt: 1 };
    expect(readTabMessage({ type: 'session', session })).toEqual({ type: 'session', session });
    expect(readTabMessage({ type: 'ended', reason: 'user' })).toEqual({ type: 'ended', reason: 'user' });
    for (const junk of [null, 'ended', { type: 'ended', reason: 'x' }, { type: 'session', session: { token: 1 } }]) {
      expect(readTabMessage(junk)).toBeNull();
    }
  });
});
