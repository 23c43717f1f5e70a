/** Merging log lines from the REST endpoint and the live socket without duplicates. */
import type { LogLine } from '../api/types';
import type { LiveLogLine } from '../live/protocol';

export interface DisplayLine {
  key: string;
  attempt: number;
  level: string;
  message: string;
  at: string;
  order: number;
}

export function lineKey(line: { attempt: number; at: string; message: string }): string {
  const time = new Date(line.at).getTime();
  return `${line.attempt}|${Number.isNaN(time) ? line.at : time}|${line.message}`;
}

/** REST lines (ordered by id) and live lines merged, de-duplicated, ordered by time. */
export function mergeLines(rest: readonly LogLine[], live: readonly LiveLogLine[]): DisplayLine[] {
  const byKey = new Map<string, DisplayLine>();
  let order = 0;
  for (const line of [...rest, ...live]) {
    const key = lineKey(line);
    if (byKey.has(key)) continue;
    byKey.set(key, {
      key,
      attempt: line.attempt,
      level: line.level,
      message: line.message,
      at: line.at,
      order: order++,
    });
  }
  return [...byKey.values()].sort((a, b) => {
    const diff = new Date(a.at).getTime() - new Date(b.at).getTime();
    return diff !== 0 && !Number.isNaN(diff) ? diff : a.order - b.order;
  });
}
