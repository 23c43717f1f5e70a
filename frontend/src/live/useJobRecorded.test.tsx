import { act, renderHook } from '@testing-library/react';
import type { ReactNode } from 'react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import type { LiveConnection, LiveStatus } from './connection';
import { LiveContext, useJobRecorded } from './context';
import type { ServerMessage } from './protocol';

class FakeConnection {
  listeners = new Set<(message: ServerMessage) => void>();
  onMessage(listener: (message: ServerMessage) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }
  emit(message: ServerMessage): void {
    for (const listener of this.listeners) listener(message);
  }
}

function wrapper(status: LiveStatus, connection: FakeConnection) {
  return ({ children }: { children: ReactNode }) => (
    <LiveContext.Provider value={{ status, connection: connection as unknown as LiveConnection }}>
      {children}
    </LiveContext.Provider>
  );
}

function change(jobId: string): ServerMessage {
  return {
    type: 'job.changes',
    changes: [
      { jobId, attempt: 0, fromStatus: null, toStatus: 'pending', reason: 'submitted', jobType: 'simulate', at: '2026-12-01T00:00:00Z' },
    ],
  };
}

describe('useJobRecorded', () => {
  beforeEach(() => vi.useFakeTimers());
  afterEach(() => vi.useRealTimers());

  it('waits for a live change of that job before the job is asked for', () => {
    const connection = new FakeConnection();
    const { result } = renderHook(() => useJobRecorded('job-1'), { wrapper: wrapper('live', connection) });
    expect(result.current).toBe(false);
    act(() => connection.emit(change('job-2')));
    expect(result.current).toBe(false);
    act(() => connection.emit(change('job-1')));
    expect(result.current).toBe(true);
  });

  it('does not wait while the socket is down', () => {
    const { result } = renderHook(() => useJobRecorded('job-1'), { wrapper: wrapper('reconnecting', new FakeConnection()) });
    expect(result.current).toBe(true);
  });

  it('gives up waiting after the fallback', () => {
    const { result } = renderHook(() => useJobRecorded('job-1', 3_000), { wrapper: wrapper('live', new FakeConnection()) });
    act(() => {
      vi.advanceTimersByTime(2_999);
    });
    expect(result.current).toBe(false);
    act(() => {
      vi.advanceTimersByTime(1);
    });
    expect(result.current).toBe(true);
  });
});
