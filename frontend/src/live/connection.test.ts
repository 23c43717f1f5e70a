import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { FakeSocket, latestSocket } from '../test/fakeSocket';
import { fakeJwt } from '../test/utils';
import { backoffDelay, LiveConnection } from './connection';
import type { ServerMessage } from './protocol';

const token = (tag: string) => fakeJwt({ exp: Math.floor(Date.now() / 1000) + 3600, tag });

function setup(options: { refresh?: () => Promise<string | null> } = {}) {
  let current: string | null = token('first');
  const refreshToken = vi.fn(
    options.refresh ??
      (() => {
        current = token('refreshed');
        return Promise.resolve(current);
      }),
  );
  const connection = new LiveConnection({
    getToken: () => current,
    refreshToken,
    createSocket: (url) => new FakeSocket(url),
    url: (t) => `ws://test/ws/events?token=${t}`,
    baseDelayMs: 1_000,
    maxDelayMs: 30_000,
    random: () => 0.5,
  });
  const statuses: string[] = [];
  connection.onStatus((s) => statuses.push(s));
  return { connection, refreshToken, statuses, token: () => current };
}

describe('backoffDelay', () => {
  it('doubles per attempt up to the cap, with jitter between half and all of it', () => {
    expect(backoffDelay(0, 1_000, 30_000, () => 0)).toBe(500);
    expect(backoffDelay(0, 1_000, 30_000, () => 1)).toBe(1_000);
    expect(backoffDelay(3, 1_000, 30_000, () => 0.5)).toBe(6_000);
    expect(backoffDelay(10, 1_000, 30_000, () => 1)).toBe(30_000);
    expect(backoffDelay(10, 1_000, 30_000, () => 0)).toBe(15_000);
  });
});

describe('LiveConnection', () => {
  beforeEach(() => {
    FakeSocket.all = [];
    vi.useFakeTimers();
  });
  afterEach(() => {
    vi.useRealTimers();
  });

  it('connects with the access token and reports live on open', async () => {
    const { connection, statuses, token: current } = setup();
    const connected = vi.fn();
    connection.onConnected(connected);
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(latestSocket().url).toBe(`ws://test/ws/events?token=${current()}`);
    latestSocket().open();
    expect(connection.status).toBe('live');
    expect(statuses).toEqual(['connecting', 'live']);
    expect(connected).toHaveBeenCalledWith({ reconnect: false });
  });

  it('reconnects with growing backoff and resets it after hello', async () => {
    const { connection } = setup();
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    latestSocket().open();
    latestSocket().drop(1006);
    expect(connection.status).toBe('reconnecting');
    // attempt 0: 1000 * (0.5 + 0.25) = 750 ms
    await vi.advanceTimersByTimeAsync(749);
    expect(FakeSocket.all).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1);
    expect(FakeSocket.all).toHaveLength(2);
    latestSocket().drop(1006);
    // attempt 1: 2000 * 0.75 = 1500 ms
    await vi.advanceTimersByTimeAsync(1_499);
    expect(FakeSocket.all).toHaveLength(2);
    await vi.advanceTimersByTimeAsync(1);
    expect(FakeSocket.all).toHaveLength(3);
    latestSocket().drop(1006);
    expect(connection.status).toBe('offline');
    // attempt 2: 3000 ms
    await vi.advanceTimersByTimeAsync(3_000);
    expect(FakeSocket.all).toHaveLength(4);
    latestSocket().open();
    latestSocket().receive({ type: 'hello', user: { email: 'user@test.com', role: 'user' } });
    expect(connection.status).toBe('live');
    latestSocket().drop(1013, 'too slow');
    // hello reset the counter: back to 750 ms
    await vi.advanceTimersByTimeAsync(750);
    expect(FakeSocket.all).toHaveLength(5);
  });

  it('re-sends its subscriptions after a reconnect and tells listeners to catch up', async () => {
    const { connection } = setup();
    const connected = vi.fn();
    connection.onConnected(connected);
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    const first = latestSocket();
    first.open();
    const stopA = connection.subscribe('job-a');
    connection.subscribe('job-b');
    expect(first.sent).toEqual([
      { type: 'subscribe', jobId: 'job-a' },
      { type: 'subscribe', jobId: 'job-b' },
    ]);
    stopA();
    expect(first.sent[2]).toEqual({ type: 'unsubscribe', jobId: 'job-a' });

    first.drop(1006);
    await vi.advanceTimersByTimeAsync(1_000);
    const second = latestSocket();
    expect(second).not.toBe(first);
    second.open();
    expect(second.sent).toEqual([{ type: 'subscribe', jobId: 'job-b' }]);
    expect(connected).toHaveBeenLastCalledWith({ reconnect: true });
    expect(connected).toHaveBeenCalledTimes(2);
  });

  it('counts subscriptions: the last unsubscribe sends the unsubscribe frame', async () => {
    const { connection } = setup();
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    latestSocket().open();
    const a = connection.subscribe('job-a');
    const b = connection.subscribe('job-a');
    expect(latestSocket().sent).toEqual([{ type: 'subscribe', jobId: 'job-a' }]);
    a();
    a();
    expect(latestSocket().sent).toHaveLength(1);
    b();
    expect(latestSocket().sent[1]).toEqual({ type: 'unsubscribe', jobId: 'job-a' });
    expect(connection.subscribedJobs()).toEqual([]);
  });

  it('refreshes the token after a 4401 close before reconnecting', async () => {
    const { connection, refreshToken, token: current } = setup();
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    latestSocket().open();
    expect(refreshToken).not.toHaveBeenCalled();
    latestSocket().drop(4401, 'token expired');
    await vi.advanceTimersByTimeAsync(1_000);
    expect(refreshToken).toHaveBeenCalledTimes(1);
    expect(latestSocket().url).toContain(current() ?? 'missing');
    expect(FakeSocket.all).toHaveLength(2);
  });

  it('refreshes an access token that is about to expire before connecting', async () => {
    const { connection, refreshToken } = setup();
    vi.setSystemTime(Date.now() + 3_600_000 - 5_000); // the first token expires in 5 s
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(refreshToken).toHaveBeenCalledTimes(1);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it('is offline when the very first connection fails', async () => {
    const { connection } = setup();
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    latestSocket().drop(1006);
    expect(connection.status).toBe('offline');
  });

  it('does not connect without a token and keeps trying', async () => {
    const refresh = vi.fn(() => Promise.resolve(null));
    const connection = new LiveConnection({
      getToken: () => null,
      refreshToken: refresh,
      createSocket: (url) => new FakeSocket(url),
      url: (t) => t,
      random: () => 0.5,
    });
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    expect(FakeSocket.all).toHaveLength(0);
    await vi.advanceTimersByTimeAsync(10_000);
    expect(refresh.mock.calls.length).toBeGreaterThan(1);
    expect(FakeSocket.all).toHaveLength(0);
    connection.stop();
  });

  it('asks again when a subscription is refused because the job is not recorded yet', async () => {
    const { connection } = setup();
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    const socket = latestSocket();
    socket.open();
    connection.subscribe('job-new');
    socket.receive({ type: 'error', error: 'not_found', message: 'job not found', jobId: 'job-new' });
    expect(socket.sent).toHaveLength(1);
    await vi.advanceTimersByTimeAsync(1_000);
    expect(socket.sent).toEqual([
      { type: 'subscribe', jobId: 'job-new' },
      { type: 'subscribe', jobId: 'job-new' },
    ]);
    socket.receive({ type: 'subscribed', jobId: 'job-new' });
    // other refusals (e.g. too many subscriptions) are not repeated
    connection.subscribe('job-other');
    socket.receive({ type: 'error', error: 'too_many_subscriptions', message: 'limit', jobId: 'job-other' });
    await vi.advanceTimersByTimeAsync(5_000);
    expect(socket.sent).toHaveLength(3);
  });

  it('stop closes the socket normally and never reconnects', async () => {
    const { connection } = setup();
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    const socket = latestSocket();
    socket.open();
    connection.stop();
    expect(socket.closedWith).toBe(1000);
    expect(connection.status).toBe('idle');
    socket.drop(1000);
    await vi.advanceTimersByTimeAsync(60_000);
    expect(FakeSocket.all).toHaveLength(1);
  });

  it('delivers parsed messages and ignores garbage', async () => {
    const { connection } = setup();
    const messages: ServerMessage[] = [];
    connection.onMessage((m) => messages.push(m));
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    latestSocket().open();
    latestSocket().onmessage?.({ data: 'not json' });
    latestSocket().onmessage?.({ data: JSON.stringify({ type: 'unknown' }) });
    latestSocket().receive({
      type: 'job.changes',
      changes: [{ jobId: 'j', attempt: 1, fromStatus: 'queued', toStatus: 'running', reason: 'started', jobType: 'email', at: '2030-01-01T00:00:00Z' }],
    });
    expect(messages).toHaveLength(1);
    expect(messages[0]?.type).toBe('job.changes');
  });

  it('hears the project chosen, and reconnects at once to another when the choice changes', async () => {
    let token = fakeJwt({ exp: Math.floor(Date.now() / 1000) + 3600 });
    const connection = new LiveConnection({
      getToken: () => token,
      refreshToken: () => Promise.resolve(token),
      createSocket: (url) => new FakeSocket(url),
      url: (t, projectId) => `ws://test/ws/events?token=${t}${projectId ? `&projectId=${projectId}` : ''}`,
      projectId: 'p-alpha',
      random: () => 0.5,
    });
    const connected = vi.fn();
    connection.onConnected(connected);
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    const first = latestSocket();
    expect(first.url).toBe(`ws://test/ws/events?token=${token}&projectId=p-alpha`);
    first.open();
    connection.subscribe('job-a');

    token = fakeJwt({ exp: Math.floor(Date.now() / 1000) + 3600, tag: 'later' });
    connection.setProject('p-beta');
    expect(first.closedWith).toBe(1000);
    await vi.advanceTimersByTimeAsync(0);
    const second = latestSocket();
    expect(FakeSocket.all).toHaveLength(2);
    expect(second.url).toBe(`ws://test/ws/events?token=${token}&projectId=p-beta`);
    second.open();
    // its subscriptions follow, and the app catches up on the new project's data
    expect(second.sent).toEqual([{ type: 'subscribe', jobId: 'job-a' }]);
    expect(connected).toHaveBeenLastCalledWith({ reconnect: true });
    connection.setProject('p-beta'); // the same: nothing happens
    connection.setProject(null);
    await vi.advanceTimersByTimeAsync(0);
    expect(latestSocket().url).toBe(`ws://test/ws/events?token=${token}`);
    expect(FakeSocket.all).toHaveLength(3);
  });

  it('stays closed when the server refuses the project (4400) until another is chosen', async () => {
    const { connection } = setup();
    connection.setProject('p-gone');
    connection.start();
    await vi.advanceTimersByTimeAsync(0);
    latestSocket().open();
    latestSocket().drop(4400, 'project not found');
    expect(connection.status).toBe('offline');
    connection.retryNow(); // the browser came back online: still not this project
    await vi.advanceTimersByTimeAsync(60_000);
    expect(FakeSocket.all).toHaveLength(1);
    connection.setProject(null);
    await vi.advanceTimersByTimeAsync(0);
    expect(FakeSocket.all).toHaveLength(2);
  });
});
