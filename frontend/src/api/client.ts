/**
 * A small typed fetch wrapper for the public API (same origin, relative paths).
 *
 * - adds the bearer access token from the auth store;
 * - turns the platform's error envelope `{"error", "message", "details": [{"field", "message"}]}`
 *   (and anything else that is not a 2xx) into a typed {@link ApiError};
 * - on a 401 asks the auth store for one refresh and repeats the request once; if that does not
 *   help the session is ended (logout). When the session already holds a newer access token
 *   than the one the request went out with (another request's refresh got there first), the
 *   request is repeated with that one instead: refresh tokens are single-use, so no refresh is
 *   started for a token that is already replaced;
 * - a 429's `Retry-After` (seconds) is kept on the error as `retryAfter`;
 * - a request under `/api` (other than the organization and project routes) says which
 *   project it acts in with `X-Project`: the one the caller names, else `project()`
 *   (./projectScope.ts), read once when the request starts.
 */
import { PROJECT_HEADER, sendsProjectHeader } from './projectScope';
import type { ErrorDetail } from './types';

export type ErrorCode =
  | 'bad_request'
  | 'unauthorized'
  | 'forbidden'
  | 'not_found'
  | 'conflict'
  | 'validation_error'
  | 'too_many_requests'
  | 'internal_error'
  | 'service_unavailable'
  | 'network_error'
  | (string & {});

const CODE_BY_STATUS: Record<number, ErrorCode> = {
  400: 'bad_request',
  401: 'unauthorized',
  403: 'forbidden',
  404: 'not_found',
  409: 'conflict',
  422: 'validation_error',
  429: 'too_many_requests',
  503: 'service_unavailable',
};

export class ApiError extends Error {
  readonly status: number;
  readonly code: ErrorCode;
  readonly details: readonly ErrorDetail[];
  /** Seconds to wait before trying again (a 429's `Retry-After`), null when not given. */
  readonly retryAfter: number | null;

  constructor(
    status: number,
    code: ErrorCode,
    message: string,
    details: ErrorDetail[] = [],
    retryAfter: number | null = null,
  ) {
    super(message);
    this.name = 'ApiError';
    this.status = status;
    this.code = code;
    this.details = details;
    this.retryAfter = retryAfter;
  }

  /** The first message per field (`payload.to`, `dependsOn.0`, ...). */
  fieldErrors(): Record<string, string> {
    const out: Record<string, string> = {};
    for (const detail of this.details) {
      out[detail.field] ??= detail.message;
    }
    return out;
  }
}

export function isApiError(value: unknown): value is ApiError {
  return value instanceof ApiError;
}

/** A short human text for any thrown value. */
export function errorMessage(error: unknown): string {
  if (error instanceof ApiError) return error.message;
  if (error instanceof Error) return error.message;
  return 'Something went wrong';
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

function toDetails(value: unknown): ErrorDetail[] {
  if (!Array.isArray(value)) return [];
  const details: ErrorDetail[] = [];
  for (const entry of value) {
    if (!isRecord(entry)) continue;
    if (typeof entry.field === 'string' && typeof entry.message === 'string') {
      details.push({ field: entry.field, message: entry.message });
    } else if (Array.isArray(entry.loc) && typeof entry.msg === 'string') {
      // FastAPI's default validation shape: loc = ["body", "payload", "to"]
      const loc = entry.loc.map(String);
      const path = ['body', 'query', 'path', 'header'].includes(loc[0] ?? '') ? loc.slice(1) : loc;
      details.push({ field: path.join('.') || 'body', message: entry.msg });
    }
  }
  return details;
}

/** Whole seconds of a `Retry-After` header given in seconds (an HTTP date is not used here). */
export function retryAfterSeconds(header: string | null | undefined): number | null {
  if (!header || !/^\s*\d+\s*$/.test(header)) return null;
  return Number.parseInt(header, 10);
}

/** Build an ApiError from a non-2xx response body (already read as text). */
export function errorFromBody(
  status: number,
  statusText: string,
  text: string,
  retryAfter: number | null = null,
): ApiError {
  const fallbackCode = CODE_BY_STATUS[status] ?? (status >= 500 ? 'internal_error' : 'bad_request');
  let body: unknown = undefined;
  if (text) {
    try {
      body = JSON.parse(text) as unknown;
    } catch {
      body = undefined;
    }
  }
  if (isRecord(body)) {
    if (typeof body.error === 'string') {
      const message = typeof body.message === 'string' ? body.message : body.error;
      return new ApiError(status, body.error, message, toDetails(body.details), retryAfter);
    }
    if (typeof body.detail === 'string') {
      return new ApiError(status, fallbackCode, body.detail, [], retryAfter);
    }
    if (Array.isArray(body.detail)) {
      return new ApiError(status, fallbackCode, 'request validation failed', toDetails(body.detail), retryAfter);
    }
  }
  const message = statusText ? `${status} ${statusText}` : `Request failed with status ${status}`;
  return new ApiError(status, fallbackCode, message, [], retryAfter);
}

export type QueryValue = string | number | boolean | null | undefined | readonly string[];

export interface RequestOptions {
  method?: 'GET' | 'POST' | 'PUT' | 'PATCH' | 'DELETE';
  query?: Record<string, QueryValue>;
  body?: unknown;
  headers?: Record<string, string>;
  signal?: AbortSignal;
  /** Send the bearer token and handle 401 with a refresh (default true). */
  auth?: boolean;
  /** Let the request outlive the page (fetch `keepalive`), e.g. a logout. */
  keepalive?: boolean;
  /**
   * The project the request acts in (`X-Project`); null: none named. Default: the client's
   * `project()`. Only requests that carry the session and `sendsProjectHeader` send it.
   */
  project?: string | null;
}

export function buildUrl(path: string, query?: Record<string, QueryValue>): string {
  if (!query) return path;
  const params = new URLSearchParams();
  for (const [key, value] of Object.entries(query)) {
    if (value === undefined || value === null || value === '') continue;
    if (Array.isArray(value)) {
      for (const item of value as readonly string[]) params.append(key, item);
    } else {
      params.append(key, String(value));
    }
  }
  const qs = params.toString();
  return qs ? `${path}?${qs}` : path;
}

export interface AuthBinding {
  /** The current access token, or null when logged out. */
  getToken(): string | null;
  /** Refresh the session once; resolves to the new access token, or null when that failed. */
  refresh(): Promise<string | null>;
  /** Called when a request stays unauthorized after a refresh: end the session. */
  onUnauthorized(): void;
}

export interface ApiClient {
  request<T>(path: string, options?: RequestOptions): Promise<T>;
}

export function createApiClient(
  auth: AuthBinding,
  fetchImpl: (input: string, init: RequestInit) => Promise<Response> = (input, init) =>
    fetch(input, init),
  /** The project a request acts in unless it names one (null: none). */
  project: () => string | null = () => null,
): ApiClient {
  async function send(path: string, options: RequestOptions, token: string | null, projectId: string | null) {
    const headers: Record<string, string> = { Accept: 'application/json', ...options.headers };
    let body: string | undefined;
    if (options.body !== undefined) {
      headers['Content-Type'] = 'application/json';
      body = JSON.stringify(options.body);
    }
    if (token) headers.Authorization = `Bearer ${token}`;
    if (projectId) headers[PROJECT_HEADER] = projectId;
    try {
      return await fetchImpl(buildUrl(path, options.query), {
        method: options.method ?? 'GET',
        headers,
        body,
        signal: options.signal,
        ...(options.keepalive ? { keepalive: true } : {}),
      });
    } catch (error) {
      if (error instanceof DOMException && error.name === 'AbortError') throw error;
      throw new ApiError(0, 'network_error', 'Cannot reach the server. Check your connection.');
    }
  }

  async function request<T>(path: string, options: RequestOptions = {}): Promise<T> {
    const useAuth = options.auth ?? true;
    const sentWith = useAuth ? auth.getToken() : null;
    // read now, before any await: a repeat after a refresh acts in the same project
    const projectId =
      useAuth && sendsProjectHeader(path) ? (options.project !== undefined ? options.project : project()) : null;
    let response = await send(path, options, sentWith, projectId);
    if (response.status === 401 && useAuth) {
      let fresh: string | null = null;
      const current = auth.getToken();
      if (current && current !== sentWith) {
        fresh = current; // refreshed meanwhile (by another request): no second refresh
      } else {
        try {
          fresh = await auth.refresh();
        } catch {
          fresh = null;
        }
      }
      if (fresh) {
        response = await send(path, options, fresh, projectId);
      }
      if (!fresh || response.status === 401) {
        auth.onUnauthorized();
      }
    }
    const text = await response.text();
    if (!response.ok) {
      throw errorFromBody(
        response.status,
        response.statusText,
        text,
        retryAfterSeconds(response.headers.get('retry-after')),
      );
    }
    if (!text) return undefined as T;
    return JSON.parse(text) as T;
  }

  return { request };
}
