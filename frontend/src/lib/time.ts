/** Time as the lists show it: a clock that ticks for relative times, a job's run time. */
import { useEffect, useState } from 'react';

/** The current time, re-read every `intervalMs` (relative times stay true while a page is open). */
export function useNow(intervalMs = 30_000): number {
  const [now, setNow] = useState(() => Date.now());
  useEffect(() => {
    const timer = window.setInterval(() => setNow(Date.now()), intervalMs);
    return () => window.clearInterval(timer);
  }, [intervalMs]);
  return now;
}

/**
 * How long a job ran: from its start to its finish, or, still running, to `now`; null when it
 * never started (or the times do not parse).
 */
export function runDurationMs(
  job: { startedAt?: string | null; finishedAt?: string | null; status: string },
  now: number,
): number | null {
  if (!job.startedAt) return null;
  const start = new Date(job.startedAt).getTime();
  const end = job.finishedAt ? new Date(job.finishedAt).getTime() : job.status === 'running' ? now : Number.NaN;
  const ms = end - start;
  return Number.isNaN(ms) ? null : Math.max(0, ms);
}
