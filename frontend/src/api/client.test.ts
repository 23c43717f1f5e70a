import { describe, expect, it, vi } from 'vitest';
import { jsonResponse } from '../test/utils';
import { ApiError, buildUrl, createApiClient, errorFromBody, retryAfterSeconds, type AuthBinding } from './client';

function binding(overrides: Partial<AuthBinding> = {}): AuthBinding & {
  refresh: ReturnType<typeof vi.fn>;
  onUnauthorized: ReturnType<typeof vi.fn>;
} {
  return {
    getToken: () => 'access-1',
    refresh: vi.fn(() => Promise.resolve<string | null>('access-2')),
    onUnauthorized: vi.fn(),
    ...overrides,
  } as never;
}

describe('errorFromBody', () => {
  it('reads the platform envelope with field details', () => {
    const error = errorFromBody(
      422,
      'Unprocessable Entity',
      JSON.stringify({
        error: 'validation_error',
        message: 'request validation failed',
        details: [
          { field: 'payload.to', message: 'not an email' },
          { field: 'priority', message: 'too big' },
          { field: 'payload.to', message: 'second message for the same field' },
        ],
      }),
    );
    expect(error).toBeInstanceOf(ApiError);
    expect(error.status).toBe(422);
    expect(error.code).toBe('validation_error');
    expect(error.message).toBe('request validation failed');
    expect(error.details).toHaveLength(3);
    expect(error.fieldErrors()).toEqual({ 'payload.to': 'not an email', priority: 'too big' });
  });

  it("maps FastAPI's own validation shape onto fields", () => {
    const error = errorFromBody(
      422,
      '',
      JSON.stringify({ detail: [{ loc: ['body', 'payload', 'to'], msg: 'bad', type: 'x' }] }),
    );
    expect(error.code).toBe('validation_error');
    expect(error.details).toEqual([{ field: 'payload.to', message: 'bad' }]);
  });

  it('falls back to a code from the status for non-JSON bodies', () => {
    const error = errorFromBody(503, 'Service Unavailable', '<html>bad gateway</html>');
    expect(error.code).toBe('service_unavailable');
    expect(error.message).toBe('503 Service Unavailable');
    expect(errorFromBody(500, '', '').code).toBe('internal_error');
    expect(errorFromBody(404, '', '').code).toBe('not_found');
  });
});

describe('retryAfterSeconds', () => {
  it('reads whole seconds and nothing else', () => {
    expect(retryAfterSeconds('12')).toBe(12);
    expect(retryAfterSeconds(' 3 ')).toBe(3);
    expect(retryAfterSeconds(null)).toBeNull();
    expect(retryAfterSeconds('Wed, 21 Oct 2015 07:28:00 GMT')).toBeNull();
    expect(retryAfterSeconds('-1')).toBeNull();
  });
});

describe('buildUrl', () => {
  it('drops empty values and repeats arrays', () => {
    expect(buildUrl('/api/jobs', { a: 1, b: '', c: undefined, d: null, e: ['x', 'y'], f: false })).toBe(
      '/api/jobs?a=1&e=x&e=y&f=false',
    );
    expect(buildUrl('/api/jobs', {})).toBe('/api/jobs');
  });
});

describe('createApiClient', () => {
  it('sends the bearer token and JSON, and parses the answer', async () => {
    const fetchImpl = vi.fn((_url: string, _init: RequestInit) => Promise.resolve(jsonResponse(202, { jobId: 'j1' })));
    const client = createApiClient(binding(), fetchImpl);
    const answer = await client.request<{ jobId: string }>('/api/jobs', {
      method: 'POST',
      body: { type: 'email' },
      headers: { 'Idempotency-Key': 'k1' },
    });
    expect(answer).toEqual({ jobId: 'j1' });
    const [url, init] = fetchImpl.mock.calls[0]!;
    expect(url).toBe('/api/jobs');
    const headers = init.headers as Record<string, string>;
    expect(headers.Authorization).toBe('Bearer access-1');
    expect(headers['Content-Type']).toBe('application/json');
    expect(headers['Idempotency-Key']).toBe('k1');
    expect(init.body).toBe('{"type":"email"}');
  });

  it('throws a typed ApiError with the envelope', async () => {
    const fetchImpl = vi.fn(() =>
      Promise.resolve(
        jsonResponse(409, { error: 'conflict', message: 'job is running', details: [{ field: 'status', message: 'running' }] }),
      ),
    );
    const client = createApiClient(binding(), fetchImpl);
    const error = await client.request('/api/jobs/x/retry', { method: 'POST' }).catch((e: unknown) => e);
    expect(error).toBeInstanceOf(ApiError);
    expect(error).toMatchObject({ status: 409, code: 'conflict', message: 'job is running' });
    expect((error as ApiError).details).toEqual([{ field: 'status', message: 'running' }]);
  });

  it('answers undefined for 204', async () => {
    const client = createApiClient(binding(), () => Promise.resolve(new Response(null, { status: 204 })));
    await expect(client.request('/api/schedules/x', { method: 'DELETE' })).resolves.toBeUndefined();
  });

  it('turns a failed fetch into a network_error', async () => {
    const client = createApiClient(binding(), () => Promise.reject(new TypeError('Failed to fetch')));
    await expect(client.request('/api/jobs')).rejects.toMatchObject({ status: 0, code: 'network_error' });
  });

  it('on 401 refreshes once and repeats the request with the new token', async () => {
    const auth = binding();
    const fetchImpl = vi
      .fn((_url: string, _init: RequestInit) => Promise.resolve(jsonResponse(200, { ok: true })))
      .mockResolvedValueOnce(jsonResponse(401, { error: 'unauthorized', message: 'token expired' }));
    const client = createApiClient(auth, fetchImpl);
    await expect(client.request('/api/jobs')).resolves.toEqual({ ok: true });
    expect(auth.refresh).toHaveBeenCalledTimes(1);
    expect(fetchImpl).toHaveBeenCalledTimes(2);
    expect((fetchImpl.mock.calls[1]![1].headers as Record<string, string>).Authorization).toBe('Bearer access-2');
    expect(auth.onUnauthorized).not.toHaveBeenCalled();
  });

  it('on 401 repeats with the newer token when another request refreshed meanwhile', async () => {
    let current = 'access-1';
    const auth = binding({ getToken: () => current });
    const fetchImpl = vi
      .fn((_url: string, _init: RequestInit) => Promise.resolve(jsonResponse(200, { ok: true })))
      .mockImplementationOnce(() => {
        current = 'access-2'; // rotated while this request was out
        return Promise.resolve(jsonResponse(401, { error: 'unauthorized', message: 'token expired' }));
      });
    const client = createApiClient(auth, fetchImpl);
    await expect(client.request('/api/jobs')).resolves.toEqual({ ok: true });
    expect(auth.refresh).not.toHaveBeenCalled();
    expect((fetchImpl.mock.calls[1]![1].headers as Record<string, string>).Authorization).toBe('Bearer access-2');
  });

  it("keeps a 429's Retry-After on the error", async () => {
    const fetchImpl = vi.fn(() =>
      Promise.resolve(
        new Response(JSON.stringify({ error: 'too_many_requests', message: 'slow down', details: [] }), {
          status: 429,
          headers: { 'Content-Type': 'application/json', 'Retry-After': '37' },
        }),
      ),
    );
    const client = createApiClient(binding(), fetchImpl);
    await expect(client.request('/api/jobs')).rejects.toMatchObject({
      status: 429,
      code: 'too_many_requests',
      retryAfter: 37,
    });
  });

  it('sends keepalive only when asked to', async () => {
    const fetchImpl = vi.fn((_url: string, _init: RequestInit) => Promise.resolve(new Response(null, { status: 204 })));
    const client = createApiClient(binding(), fetchImpl);
    await client.request('/auth/logout', { method: 'POST', body: { refreshToken: 'r' }, auth: false, keepalive: true });
    await client.request('/api/jobs');
    expect(fetchImpl.mock.calls[0]![1].keepalive).toBe(true);
    expect(fetchImpl.mock.calls[1]![1].keepalive).toBeUndefined();
  });

  it('logs out when the refresh fails', async () => {
    const auth = binding({ refresh: vi.fn(() => Promise.resolve(null)) });
    const fetchImpl = vi.fn(() => Promise.resolve(jsonResponse(401, { error: 'unauthorized', message: 'expired' })));
    const client = createApiClient(auth, fetchImpl);
    await expect(client.request('/api/jobs')).rejects.toMatchObject({ status: 401, code: 'unauthorized' });
    expect(fetchImpl).toHaveBeenCalledTimes(1);
    expect(auth.onUnauthorized).toHaveBeenCalledTimes(1);
  });

  it('logs out when the repeated request is still 401 (and does not loop)', async () => {
    const auth = binding();
    const fetchImpl = vi.fn(() => Promise.resolve(jsonResponse(401, { error: 'unauthorized', message: 'no' })));
    const client = createApiClient(auth, fetchImpl);
    await expect(client.request('/api/jobs')).rejects.toBeInstanceOf(ApiError);
    expect(fetchImpl).toHaveBeenCalledTimes(2);
    expect(auth.refresh).toHaveBeenCalledTimes(1);
    expect(auth.onUnauthorized).toHaveBeenCalledTimes(1);
  });

  it('does not refresh for unauthenticated calls such as login', async () => {
    const auth = binding();
    const fetchImpl = vi.fn((_url: string, _init: RequestInit) =>
      Promise.resolve(jsonResponse(401, { error: 'unauthorized', message: 'invalid credentials' })),
    );
    const client = createApiClient(auth, fetchImpl);
    await expect(client.request('/auth/login', { method: 'POST', body: {}, auth: false })).rejects.toMatchObject({
      message: 'invalid credentials',
    });
    expect(auth.refresh).not.toHaveBeenCalled();
    expect((fetchImpl.mock.calls[0]![1].headers as Record<string, string>).Authorization).toBeUndefined();
  });
});
