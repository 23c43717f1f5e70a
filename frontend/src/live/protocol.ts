/** Messages of `GET /ws/events` (the gateway's live-events socket). */

export interface JobChange {
  jobId: string;
  attempt: number;
  fromStatus: string | null;
  toStatus: string;
  reason: string;
  jobType: string;
  at: string;
  /** The job's project (docs/tenancy.md, "Live events"). */
  projectId?: string;
}

export interface LiveLogLine {
  jobId: string;
  attempt: number;
  level: string;
  message: string;
  at: string;
}

export type ServerMessage =
  | { type: 'hello'; user: { email: string; role: string } }
  | { type: 'job.changes'; changes: JobChange[] }
  | { type: 'job.logs'; lines: LiveLogLine[] }
  | { type: 'subscribed'; jobId: string }
  | { type: 'unsubscribed'; jobId: string }
  | { type: 'error'; error: string; message: string; jobId?: string | null };

export type ClientMessage =
  | { type: 'subscribe'; jobId: string }
  | { type: 'unsubscribe'; jobId: string };

/** Close codes the server uses. */
export const CLOSE_NORMAL = 1000;
export const CLOSE_TRY_AGAIN_LATER = 1013; // the client was too slow: reconnect
export const CLOSE_UNAUTHORIZED = 4401; // token invalid or expired: refresh, then reconnect
export const CLOSE_REFUSED = 4400; // the ?projectId= named is not the user's: do not reconnect

const KNOWN = new Set(['hello', 'job.changes', 'job.logs', 'subscribed', 'unsubscribed', 'error']);

export function parseServerMessage(data: unknown): ServerMessage | null {
  if (typeof data !== 'string') return null;
  try {
    const value = JSON.parse(data) as unknown;
    if (typeof value !== 'object' || value === null) return null;
    const type = (value as { type?: unknown }).type;
    if (typeof type !== 'string' || !KNOWN.has(type)) return null;
    if (type === 'job.changes' && !Array.isArray((value as { changes?: unknown }).changes)) {
      return null;
    }
    if (type === 'job.logs' && !Array.isArray((value as { lines?: unknown }).lines)) return null;
    return value as ServerMessage;
  } catch {
    return null;
  }
}
