/**
 * One WebSocket to `/ws/events` for the whole app.
 *
 * - connects with the current access token (`?token=`), refreshing it first when it is about to
 *   expire, and again after a 4401 close;
 * - reconnects after any unexpected close (1013 "too slow" included) with exponential backoff and
 *   jitter; the attempt counter resets once the server said hello;
 * - keeps the log subscriptions (reference counted) and sends them again after each reconnect;
 * - tells listeners about every (re)connect so the app can refetch what it missed;
 * - hears one project's changes when the console follows one (`&projectId=`, `setProject`
 *   reconnects at once when the choice changes); a project the user may not see closes the
 *   socket with 4400, and it stays closed until another project is chosen.
 */
import { tokenExpiresAt } from '../auth/jwt';
import {
  CLOSE_NORMAL,
  CLOSE_REFUSED,
  CLOSE_UNAUTHORIZED,
  parseServerMessage,
  type ClientMessage,
  type ServerMessage,
} from './protocol';

export type LiveStatus = 'idle' | 'connecting' | 'live' | 'reconnecting' | 'offline';

export interface SocketLike {
  readonly readyState: number;
  onopen: ((event: unknown) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onerror: ((event: unknown) => void) | null;
  send(data: string): void;
  close(code?: number, reason?: string): void;
}

export type SocketFactory = (url: string) => SocketLike;

export interface LiveConnectionOptions {
  getToken(): string | null;
  /** A fresh access token, or null when the session is gone. */
  refreshToken(): Promise<string | null>;
  /** The socket URL for a token and project; default: same origin, ws(s)://host/ws/events?token=...&projectId=... */
  url?: (token: string, projectId: string | null) => string;
  /** The project whose changes to hear (null: every project of the user). */
  projectId?: string | null;
  createSocket?: SocketFactory;
  baseDelayMs?: number;
  maxDelayMs?: number;
  random?: () => number;
  /** Refresh before connecting when the token expires within this long. */
  tokenMinValidityMs?: number;
  /** A refused subscription is asked for again after this long, at most `resubscribeTries` times. */
  resubscribeDelayMs?: number;
  resubscribeTries?: number;
}

const OPEN = 1;

export function defaultSocketUrl(token: string, projectId: string | null = null): string {
  const { protocol, host } = window.location;
  const scheme = protocol === 'https:' ? 'wss:' : 'ws:';
  const project = projectId ? `&projectId=${encodeURIComponent(projectId)}` : '';
  return `${scheme}//${host}/ws/events?token=${encodeURIComponent(token)}${project}`;
}

/** Exponential backoff with "equal jitter": half the capped delay fixed, half random. */
export function backoffDelay(
  attempt: number,
  baseMs: number,
  maxMs: number,
  random: () => number = Math.random,
): number {
  const capped = Math.min(maxMs, baseMs * 2 ** Math.max(0, attempt));
  return capped / 2 + random() * (capped / 2);
}

type Listener<T> = (value: T) => void;

export class LiveConnection {
  private readonly options: Required<Omit<LiveConnectionOptions, 'getToken' | 'refreshToken' | 'projectId'>> &
    Pick<LiveConnectionOptions, 'getToken' | 'refreshToken'>;
  private projectId: string | null;
  /** The server refused the project (4400): no reconnect until another one is chosen. */
  private refused = false;
  private socket: SocketLike | null = null;
  private statusValue: LiveStatus = 'idle';
  private attempt = 0;
  private retryTimer: ReturnType<typeof setTimeout> | null = null;
  private running = false;
  private generation = 0;
  private forceRefresh = false;
  private readonly subscriptions = new Map<string, number>();
  /** Refused subscriptions (job not recorded yet, upstream busy) being asked for again. */
  private readonly resubscribes = new Map<string, { tries: number; timer: ReturnType<typeof setTimeout> }>();
  private readonly messageListeners = new Set<Listener<ServerMessage>>();
  private readonly statusListeners = new Set<Listener<LiveStatus>>();
  private readonly connectedListeners = new Set<Listener<{ reconnect: boolean }>>();
  private connectedBefore = false;

  constructor({ projectId = null, ...options }: LiveConnectionOptions) {
    this.projectId = projectId;
    this.options = {
      url: defaultSocketUrl,
      createSocket: (url) => new WebSocket(url) as unknown as SocketLike,
      baseDelayMs: 1_000,
      maxDelayMs: 30_000,
      random: Math.random,
      tokenMinValidityMs: 10_000,
      resubscribeDelayMs: 1_000,
      resubscribeTries: 10,
      ...options,
    };
  }

  get status(): LiveStatus {
    return this.statusValue;
  }

  /** Delay before the next reconnect attempt (exposed for tests and the header tooltip). */
  get attempts(): number {
    return this.attempt;
  }

  start(): void {
    if (this.running) return;
    this.running = true;
    this.attempt = 0;
    this.refused = false;
    this.connectedBefore = false;
    void this.connect();
  }

  stop(): void {
    this.running = false;
    for (const jobId of [...this.resubscribes.keys()]) this.cancelResubscribe(jobId);
    this.generation += 1;
    this.clearRetry();
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      this.detach(socket);
      socket.close(CLOSE_NORMAL, 'client stopped');
    }
    this.setStatus('idle');
  }

  /** The project whose changes to hear (null: all); a change reconnects at once. */
  setProject(projectId: string | null): void {
    if (projectId === this.projectId) return;
    this.projectId = projectId;
    this.refused = false;
    if (!this.running) return;
    // the open socket hears another project's changes: drop it (a connect awaiting its token
    // is dropped too: connect() starts a new generation) and connect at once
    this.clearRetry();
    const socket = this.socket;
    this.socket = null;
    if (socket) {
      this.detach(socket);
      socket.close(CLOSE_NORMAL, 'project changed');
    }
    this.attempt = 0;
    void this.connect();
  }

  get project(): string | null {
    return this.projectId;
  }

  /** Reconnect now if a reconnect is pending (e.g. the browser came back online). */
  retryNow(): void {
    if (!this.running || this.socket || this.refused) return;
    this.clearRetry();
    void this.connect();
  }

  /** Follow a job's log lines; returns the function that stops following. */
  subscribe(jobId: string): () => void {
    const count = this.subscriptions.get(jobId) ?? 0;
    this.subscriptions.set(jobId, count + 1);
    if (count === 0) this.send({ type: 'subscribe', jobId });
    let done = false;
    return () => {
      if (done) return;
      done = true;
      const left = (this.subscriptions.get(jobId) ?? 1) - 1;
      if (left <= 0) {
        this.subscriptions.delete(jobId);
        this.cancelResubscribe(jobId);
        this.send({ type: 'unsubscribe', jobId });
      } else {
        this.subscriptions.set(jobId, left);
      }
    };
  }

  subscribedJobs(): string[] {
    return [...this.subscriptions.keys()];
  }

  onMessage(listener: Listener<ServerMessage>): () => void {
    this.messageListeners.add(listener);
    return () => this.messageListeners.delete(listener);
  }

  onStatus(listener: Listener<LiveStatus>): () => void {
    this.statusListeners.add(listener);
    return () => this.statusListeners.delete(listener);
  }

  /** Called on every successful (re)connect: refetch what may have been missed. */
  onConnected(listener: Listener<{ reconnect: boolean }>): () => void {
    this.connectedListeners.add(listener);
    return () => this.connectedListeners.delete(listener);
  }

  private setStatus(status: LiveStatus): void {
    if (status === this.statusValue) return;
    this.statusValue = status;
    for (const listener of this.statusListeners) listener(status);
  }

  private send(message: ClientMessage): void {
    const socket = this.socket;
    if (socket && socket.readyState === OPEN) socket.send(JSON.stringify(message));
  }

  private clearRetry(): void {
    if (this.retryTimer !== null) clearTimeout(this.retryTimer);
    this.retryTimer = null;
  }

  private detach(socket: SocketLike): void {
    socket.onopen = null;
    socket.onclose = null;
    socket.onmessage = null;
    socket.onerror = null;
  }

  private async token(): Promise<string | null> {
    let token = this.options.getToken();
    const expiresAt = token ? tokenExpiresAt(token) : null;
    const expiring = expiresAt !== null && expiresAt - Date.now() < this.options.tokenMinValidityMs;
    if (!token || expiring || this.forceRefresh) {
      this.forceRefresh = false;
      try {
        token = await this.options.refreshToken();
      } catch {
        token = null;
      }
    }
    return token;
  }

  private async connect(): Promise<void> {
    const generation = ++this.generation;
    this.setStatus(this.connectedBefore || this.attempt > 0 ? 'reconnecting' : 'connecting');
    const token = await this.token();
    if (generation !== this.generation || !this.running) return;
    if (!token) {
      // logged out or the refresh failed: nothing to connect with; try later
      this.scheduleReconnect();
      return;
    }
    let socket: SocketLike;
    try {
      socket = this.options.createSocket(this.options.url(token, this.projectId));
    } catch {
      this.scheduleReconnect();
      return;
    }
    this.socket = socket;
    socket.onopen = () => {
      if (this.socket !== socket) return;
      this.setStatus('live');
      for (const jobId of this.subscriptions.keys()) {
        socket.send(JSON.stringify({ type: 'subscribe', jobId } satisfies ClientMessage));
      }
      const reconnect = this.connectedBefore;
      this.connectedBefore = true;
      for (const listener of this.connectedListeners) listener({ reconnect });
    };
    socket.onmessage = (event) => {
      if (this.socket !== socket) return;
      const message = parseServerMessage(event.data);
      if (!message) return;
      if (message.type === 'hello') this.attempt = 0;
      if (message.type === 'subscribed') this.cancelResubscribe(message.jobId);
      if (message.type === 'error' && message.jobId) this.retrySubscription(message.jobId, message.error);
      for (const listener of this.messageListeners) listener(message);
    };
    socket.onerror = () => {
      /* a close event follows */
    };
    socket.onclose = (event) => {
      if (this.socket !== socket) return;
      this.detach(socket);
      this.socket = null;
      if (!this.running) return;
      if (event.code === CLOSE_REFUSED) {
        // the project is not the user's (the console says so): asking again will not help
        this.refused = true;
        this.setStatus('offline');
        return;
      }
      if (event.code === CLOSE_UNAUTHORIZED) this.forceRefresh = true;
      this.scheduleReconnect();
    };
  }

  private cancelResubscribe(jobId: string): void {
    const pending = this.resubscribes.get(jobId);
    if (pending) clearTimeout(pending.timer);
    this.resubscribes.delete(jobId);
  }

  /**
   * A job opened right after its submission may not be recorded yet: the server then refuses the
   * subscription (not_found). Ask again a few times while someone still follows the job.
   */
  private retrySubscription(jobId: string, error: string): void {
    if (!this.subscriptions.has(jobId)) return;
    if (error !== 'not_found' && error !== 'service_unavailable') return;
    const tries = (this.resubscribes.get(jobId)?.tries ?? 0) + 1;
    if (tries > this.options.resubscribeTries) return;
    const timer = setTimeout(() => {
      if (this.subscriptions.has(jobId)) this.send({ type: 'subscribe', jobId });
    }, this.options.resubscribeDelayMs);
    this.resubscribes.set(jobId, { tries, timer });
  }

  private scheduleReconnect(): void {
    if (!this.running) return;
    this.clearRetry();
    this.setStatus(this.connectedBefore || this.attempt > 0 ? 'reconnecting' : 'offline');
    const delay = backoffDelay(
      this.attempt,
      this.options.baseDelayMs,
      this.options.maxDelayMs,
      this.options.random,
    );
    this.attempt += 1;
    if (this.attempt >= 3) this.setStatus('offline');
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      void this.connect();
    }, delay);
  }
}
