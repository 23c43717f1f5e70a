/**
 * A queue's depth and last hour on the Queues page (docs/flow-control.md, "Depth and the last
 * hour"): its unfinished jobs by state and priority as a small table, and its jobs waiting and
 * running per minute as a sparkline with a text alternative.
 */
import type { JobStatus, QueueDepthEntry } from '../api/types';
import { JOB_STATUSES, TERMINAL_STATUSES } from '../api/types';

/** The minutes the sparkline covers. */
export const HISTORY_MINUTES = 60;

/** The statuses a queue's unfinished jobs may have, in the order of the job lifecycle. */
export const UNFINISHED_STATUSES: readonly JobStatus[] = JOB_STATUSES.filter((s) => !TERMINAL_STATUSES.includes(s));

/** The priorities as columns, high first. */
export const PRIORITY_COLUMNS = [
  { priority: 3, label: 'High' },
  { priority: 2, label: 'Medium' },
  { priority: 1, label: 'Low' },
] as const;

/** One row of the depth table: a status and its jobs per priority (by priority number). */
export interface DepthRow {
  status: JobStatus;
  counts: Record<number, number>;
  total: number;
}

/** The statuses the queue has jobs in (lifecycle order), each with its jobs per priority. */
export function depthRows(depth: readonly QueueDepthEntry[]): DepthRow[] {
  const rows = new Map<JobStatus, DepthRow>();
  for (const entry of depth) {
    const row = rows.get(entry.status) ?? { status: entry.status, counts: {}, total: 0 };
    row.counts[entry.priority] = (row.counts[entry.priority] ?? 0) + entry.count;
    row.total += entry.count;
    rows.set(entry.status, row);
  }
  const order = (status: JobStatus) => JOB_STATUSES.indexOf(status);
  return [...rows.values()].sort((a, b) => order(a.status) - order(b.status));
}

/** The largest and the last known value of a series (null: a minute nobody sampled). */
function extent(values: readonly (number | null)[]): { max: number; last: number | null; known: number } {
  let max = 0;
  let last: number | null = null;
  let known = 0;
  for (const value of values) {
    if (value === null) continue;
    known += 1;
    max = Math.max(max, value);
    last = value;
  }
  return { max, last, known };
}

/**
 * The sparkline's text alternative: "Last 60 minutes of emails: waiting up to 12, 3 at the
 * last sample; running up to 2, 1 at the last sample." with the minutes nobody sampled.
 */
export function historySummary(name: string, waiting: readonly (number | null)[], running: readonly (number | null)[]): string {
  const minutes = Math.max(waiting.length, running.length);
  const w = extent(waiting);
  const r = extent(running);
  const head = `Last ${minutes} minutes of ${name}`;
  if (w.known === 0) return `${head}: not sampled yet.`;
  const unsampled = minutes - w.known;
  const gaps = unsampled > 0 ? ` ${unsampled} of the minutes were not sampled.` : '';
  return (
    `${head}: waiting up to ${w.max}, ${w.last ?? 0} at the last sample; ` +
    `running up to ${r.max}, ${r.last ?? 0} at the last sample.${gaps}`
  );
}

/**
 * An SVG path through `values` in a `width` x `height` box (0 at the bottom, `max` at the top,
 * the first value at the left edge, the last at the right): a gap where a value is null, a
 * short flat stroke for a value with no known neighbour.
 */
export function sparkPath(values: readonly (number | null)[], max: number, width: number, height: number): string {
  const top = Math.max(max, 1);
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const parts: string[] = [];
  let drawing = false;
  values.forEach((value, i) => {
    if (value === null) {
      drawing = false;
      return;
    }
    const x = Number((i * step).toFixed(2));
    const y = Number((height - (value / top) * height).toFixed(2));
    const alone = !drawing && (i + 1 >= values.length || values[i + 1] === null);
    if (alone) {
      // a lone point: a stroke of a pixel either side, so it shows
      parts.push(`M${Math.max(0, x - 1)},${y}L${Math.min(width, x + 1)},${y}`);
    } else {
      parts.push(`${drawing ? 'L' : 'M'}${x},${y}`);
    }
    drawing = !alone;
  });
  return parts.join('');
}
