import { createContext, useContext, useEffect, useRef, useState } from 'react';
import type { LiveConnection, LiveStatus } from './connection';
import type { LiveLogLine } from './protocol';

export interface LiveContextValue {
  status: LiveStatus;
  connection: LiveConnection | null;
}

export const LiveContext = createContext<LiveContextValue>({ status: 'idle', connection: null });

export function useLive(): LiveContextValue {
  return useContext(LiveContext);
}

export function useLiveStatus(): LiveStatus {
  return useContext(LiveContext).status;
}

/**
 * `refetchInterval` for queries that live events keep fresh: no polling while the socket is
 * live, `ms` while it is down.
 */
export function usePollWhileOffline(ms: number): number | false {
  return useLiveStatus() === 'live' ? false : ms;
}

/** Follow a job's log lines over the socket while `enabled`. */
export function useJobLogStream(
  jobId: string | undefined,
  enabled: boolean,
  onLines: (lines: LiveLogLine[]) => void,
): void {
  const { connection } = useContext(LiveContext);
  const handler = useRef(onLines);
  useEffect(() => {
    handler.current = onLines;
  });
  useEffect(() => {
    if (!connection || !jobId || !enabled) return;
    const off = connection.onMessage((message) => {
      if (message.type !== 'job.logs') return;
      const mine = message.lines.filter((line) => line.jobId === jobId);
      if (mine.length > 0) handler.current(mine);
    });
    const unsubscribe = connection.subscribe(jobId);
    return () => {
      off();
      unsubscribe();
    };
  }, [connection, jobId, enabled]);
}

/**
 * Whether a just-accepted job is worth asking for: the scheduler records it a moment after the
 * 202, and asking before that answers 404 (which the browser logs as an error). True once a
 * live change of the job arrived, at once while the socket is not live (then the caller polls
 * and tolerates the 404s), and after `fallbackMs` in any case.
 */
export function useJobRecorded(jobId: string, fallbackMs = 3_000): boolean {
  const { status, connection } = useContext(LiveContext);
  const [seen, setSeen] = useState(false);
  useEffect(() => {
    if (seen || !connection) return;
    const stop = connection.onMessage((message) => {
      if (message.type === 'job.changes' && message.changes.some((c) => c.jobId === jobId)) setSeen(true);
    });
    const timer = setTimeout(() => setSeen(true), fallbackMs);
    return () => {
      stop();
      clearTimeout(timer);
    };
  }, [connection, jobId, fallbackMs, seen]);
  return seen || status !== 'live';
}
