import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../api/client';
import type { TokenResponse } from '../api/types';
import { fakeTokens } from '../test/utils';
import { tokenExpiresAt } from './jwt';
import { createAuthStore, STORAGE_KEY } from './store';

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

describe('auth store', () => {
  beforeEach(() => {
    vi.useFakeTimers();
    vi.setSystemTime(NOW);
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('keeps the session in storage and reads expiry from the JWT', () => {
    const storage = memoryStorage();
    const store = createAuthStore({ refreshRequest: vi.fn(), storage });
    const tokens = fakeTokens({ expiresInSeconds: 600, now: NOW });
    store.getState().login(tokens);
    const session = store.getState().session;
    expect(session?.token).toBe(tokens.token);
    expect(session?.expiresAt).toBe(NOW + 600_000);
    expect(JSON.parse(storage.data.get(STORAGE_KEY) ?? '{}')).toMatchObject({ token: tokens.token });
  });

  it('refreshes one minute before the access token expires, and again after that', async () => {
    const refreshRequest = vi.fn((_: string) =>
      Promise.resolve(fakeTokens({ expiresInSeconds: 600, now: Date.now(), tag: String(Date.now()) })),
    );
    const store = createAuthStore({ refreshRequest, storage: memoryStorage() });
    const first = fakeTokens({ expiresInSeconds: 600, now: NOW });
    store.getState().login(first);

    await vi.advanceTimersByTimeAsync(600_000 - 60_000 - 1);
    expect(refreshRequest).not.toHaveBeenCalled();
    await vi.advanceTimersByTimeAsync(1);
    expect(refreshRequest).toHaveBeenCalledTimes(1);
    expect(refreshRequest).toHaveBeenCalledWith(first.refreshToken);
    const second = store.getState().session;
    expect(second?.token).not.toBe(first.token);
    expect(second?.expiresAt).toBe(Date.now() + 600_000);

    await vi.advanceTimersByTimeAsync(540_000);
    expect(refreshRequest).toHaveBeenCalledTimes(2);
    expect(refreshRequest).toHaveBeenLastCalledWith(second?.refreshToken);
  });

  it('runs concurrent refreshes as one request', async () => {
    let resolve: (value: TokenResponse) => void = () => undefined;
    const refreshRequest = vi.fn(() => new Promise<TokenResponse>((r) => (resolve = r)));
    const store = createAuthStore({ refreshRequest, storage: memoryStorage() });
    store.getState().login(fakeTokens({ now: NOW }));
    const a = store.getState().refresh();
    const b = store.getState().refresh();
    const next = fakeTokens({ now: NOW, tag: 'next' });
    resolve(next);
    await expect(a).resolves.toBe(next.token);
    await expect(b).resolves.toBe(next.token);
    expect(refreshRequest).toHaveBeenCalledTimes(1);
  });

  it('logs out when the refresh token is refused', async () => {
    const storage = memoryStorage();
    const refreshRequest = vi.fn(() => Promise.reject(new ApiError(401, 'unauthorized', 'expired')));
    const store = createAuthStore({ refreshRequest, storage });
    store.getState().login(fakeTokens({ now: NOW }));
    await expect(store.getState().refresh()).resolves.toBeNull();
    expect(store.getState().session).toBeNull();
    expect(store.getState().endedBecause).toBe('expired');
    expect(storage.data.has(STORAGE_KEY)).toBe(false);
  });

  it('keeps the session on a network failure and tries again later', async () => {
    const refreshRequest = vi
      .fn((_: string) => Promise.resolve(fakeTokens({ now: Date.now(), tag: 'later' })))
      .mockRejectedValueOnce(new ApiError(0, 'network_error', 'offline'));
    const store = createAuthStore({ refreshRequest, storage: memoryStorage(), retryDelayMs: 15_000 });
    store.getState().login(fakeTokens({ expiresInSeconds: 600, now: NOW }));
    await vi.advanceTimersByTimeAsync(540_000);
    expect(refreshRequest).toHaveBeenCalledTimes(1);
    expect(store.getState().session).not.toBeNull();
    await vi.advanceTimersByTimeAsync(15_000);
    expect(refreshRequest).toHaveBeenCalledTimes(2);
    expect(store.getState().session?.expiresAt).toBe(Date.now() + 3_600_000);
  });

  it('keeps the rotated refresh token of every answer and never sends a used one', async () => {
    const answers: TokenResponse[] = [];
    const refreshRequest = vi.fn((_: string) => {
      const next = fakeTokens({ now: Date.now(), tag: `r${answers.length}` });
      answers.push(next);
      return Promise.resolve(next);
    });
    const storage = memoryStorage();
    const store = createAuthStore({ refreshRequest, storage });
    const first = fakeTokens({ now: NOW, tag: 'login' });
    store.getState().login(first);
    await store.getState().refresh();
    await Promise.all([store.getState().refresh(), store.getState().refresh()]);
    await store.getState().refresh();
    expect(refreshRequest.mock.calls.map(([token]) => token)).toEqual([
      first.refreshToken,
      answers[0]!.refreshToken,
      answers[1]!.refreshToken,
    ]);
    expect(new Set(refreshRequest.mock.calls.map(([token]) => token)).size).toBe(3);
    expect(store.getState().session?.refreshToken).toBe(answers[2]!.refreshToken);
    expect(JSON.parse(storage.data.get(STORAGE_KEY) ?? '{}')).toMatchObject({
      refreshToken: answers[2]!.refreshToken,
    });
  });

  it('a refresh asked for while one is under way waits for it instead of sending the same token', async () => {
    let resolve: (value: TokenResponse) => void = () => undefined;
    const refreshRequest = vi.fn((_: string) => new Promise<TokenResponse>((r) => (resolve = r)));
    const store = createAuthStore({ refreshRequest, storage: memoryStorage() });
    const first = fakeTokens({ now: NOW });
    store.getState().login(first);
    const scheduled = store.getState().refresh(); // e.g. the timer
    const onUnauthorized = store.getState().refresh(); // e.g. a request's 401
    expect(refreshRequest).toHaveBeenCalledTimes(1);
    const next = fakeTokens({ now: NOW, tag: 'next' });
    resolve(next);
    await Promise.all([scheduled, onUnauthorized]);
    void store.getState().refresh();
    expect(refreshRequest).toHaveBeenCalledTimes(2);
    expect(refreshRequest).toHaveBeenLastCalledWith(next.refreshToken);
  });

  it("a user's logout sends the refresh token to the server before clearing the session", () => {
    const storage = memoryStorage();
    const seen: { token: string; sessionStillThere: boolean }[] = [];
    const store = createAuthStore({
      refreshRequest: vi.fn(),
      storage,
      logoutRequest: (token) => {
        seen.push({ token, sessionStillThere: store.getState().session !== null });
        return Promise.resolve();
      },
    });
    const tokens = fakeTokens({ now: NOW });
    store.getState().login(tokens);
    store.getState().logout('user');
    expect(seen).toEqual([{ token: tokens.refreshToken, sessionStillThere: true }]);
    expect(store.getState().session).toBeNull();
    expect(storage.data.has(STORAGE_KEY)).toBe(false);
    store.getState().logout('user'); // nothing left to revoke
    expect(seen).toHaveLength(1);
  });

  it('logs out locally even when the server cannot be reached, and not at all on expiry', async () => {
    const logoutRequest = vi.fn(() => Promise.reject(new ApiError(0, 'network_error', 'offline')));
    const store = createAuthStore({ refreshRequest: vi.fn(), storage: memoryStorage(), logoutRequest });
    store.getState().login(fakeTokens({ now: NOW }));
    store.getState().logout('user');
    await vi.advanceTimersByTimeAsync(0);
    expect(store.getState().session).toBeNull();
    expect(logoutRequest).toHaveBeenCalledTimes(1);
    store.getState().login(fakeTokens({ now: NOW }));
    store.getState().logout('expired'); // the server refused the session already
    expect(logoutRequest).toHaveBeenCalledTimes(1);
  });

  it('logout clears storage and cancels the planned refresh', async () => {
    const storage = memoryStorage();
    const refreshRequest = vi.fn(() => Promise.resolve(fakeTokens()));
    const store = createAuthStore({ refreshRequest, storage });
    store.getState().login(fakeTokens({ expiresInSeconds: 120, now: NOW }));
    store.getState().logout();
    expect(store.getState().session).toBeNull();
    expect(store.getState().endedBecause).toBe('user');
    expect(storage.data.has(STORAGE_KEY)).toBe(false);
    await vi.advanceTimersByTimeAsync(3_600_000);
    expect(refreshRequest).not.toHaveBeenCalled();
  });

  it('restores a stored session and refreshes at once when it has expired', async () => {
    const storage = memoryStorage();
    const old = fakeTokens({ expiresInSeconds: 60, now: NOW - 3_600_000 });
    storage.setItem(
      STORAGE_KEY,
      JSON.stringify({ token: old.token, refreshToken: old.refreshToken, user: old.user, expiresAt: tokenExpiresAt(old.token) }),
    );
    const refreshRequest = vi.fn(() => Promise.resolve(fakeTokens({ now: NOW, tag: 'fresh' })));
    const store = createAuthStore({ refreshRequest, storage });
    expect(store.getState().session?.user.email).toBe('user@test.com');
    await vi.advanceTimersByTimeAsync(0);
    expect(refreshRequest).toHaveBeenCalledWith(old.refreshToken);
    expect(store.getState().session?.expiresAt).toBe(NOW + 3_600_000);
  });

  it('drops a stored session whose refresh token has expired', () => {
    const storage = memoryStorage();
    const old = fakeTokens({ now: NOW - 8 * 86_400_000 });
    storage.setItem(
      STORAGE_KEY,
      JSON.stringify({ token: old.token, refreshToken: old.refreshToken, user: old.user, expiresAt: 1 }),
    );
    const store = createAuthStore({ refreshRequest: vi.fn(), storage });
    expect(store.getState().session).toBeNull();
    expect(storage.data.has(STORAGE_KEY)).toBe(false);
  });
});
