/**
 * What the tabs of one browser share about the session, and how they take turns.
 *
 * - A channel (BroadcastChannel `jobs.session`): a tab that logs in or refreshes tells the
 *   others the new access token (they need no refresh of their own), and a logout, or a session
 *   the server refused, ends the session in every tab.
 * - A lock (Web Locks `jobs.session.refresh`): the refresh token is one cookie for all tabs and
 *   each refresh uses it up, so two tabs refreshing at once would present the same token twice,
 *   which the gateway takes for a stolen copy and ends the session. One refresh at a time.
 * - A hint (localStorage `jobs.session`, "1", nothing secret): a session may exist in this
 *   browser, so a new tab asks the gateway for it; without it a logged-out visit sends nothing.
 */
import type { UserPublic } from '../api/types';

export interface SharedSession {
  token: string;
  user: UserPublic;
  /** Access token expiry, epoch ms. */
  expiresAt: number;
}

export type EndReason = 'user' | 'expired';

export type TabMessage = { type: 'session'; session: SharedSession } | { type: 'ended'; reason: EndReason };

export interface TabChannel {
  /** Tell the other tabs (never this one). */
  post(message: TabMessage): void;
  /** Hear the other tabs; returns the unsubscribe. */
  subscribe(listener: (message: TabMessage) => void): () => void;
}

/** Runs `run` while no other tab of this browser runs one under the same lock. */
export type Exclusive = <T>(run: () => Promise<T>) => Promise<T>;

export type HintStorage = Pick<Storage, 'getItem' | 'setItem' | 'removeItem'>;

export const CHANNEL_NAME = 'jobs.session';
export const LOCK_NAME = 'jobs.session.refresh';
export const HINT_KEY = 'jobs.session';

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null;
}

/** A message another tab sent, or null for anything else. */
export function readTabMessage(data: unknown): TabMessage | null {
  if (!isRecord(data)) return null;
  if (data.type === 'ended' && (data.reason === 'user' || data.reason === 'expired')) {
    return { type: 'ended', reason: data.reason };
  }
  const session = data.session;
  if (
    data.type === 'session' &&
    isRecord(session) &&
    typeof session.token === 'string' &&
    typeof session.expiresAt === 'number' &&
    isRecord(session.user) &&
    typeof session.user.email === 'string'
  ) {
    return { type: 'session', session: session as unknown as SharedSession };
  }
  return null;
}

/** The browser's BroadcastChannel, or null where there is none. */
export function browserTabChannel(name = CHANNEL_NAME): TabChannel | null {
  if (typeof BroadcastChannel === 'undefined') return null;
  const channel = new BroadcastChannel(name);
  return {
    post: (message) => channel.postMessage(message),
    subscribe(listener) {
      const onMessage = (event: MessageEvent) => {
        const message = readTabMessage(event.data);
        if (message) listener(message);
      };
      channel.addEventListener('message', onMessage);
      return () => channel.removeEventListener('message', onMessage);
    },
  };
}

/**
 * The browser's Web Locks, or null where there are none (a page served over plain http from
 * another host than localhost): tabs then refresh without taking turns.
 */
export function browserLock(name = LOCK_NAME): Exclusive | null {
  const locks = typeof navigator === 'undefined' ? undefined : (navigator.locks as LockManager | undefined);
  if (!locks) return null;
  // the lock's promise settles with what `run`'s promise settles with
  return <T>(run: () => Promise<T>) => locks.request(name, run) as Promise<unknown> as Promise<T>;
}

export function browserHintStorage(): HintStorage | null {
  try {
    return typeof localStorage === 'undefined' ? null : localStorage;
  } catch {
    return null; // storage disabled
  }
}
