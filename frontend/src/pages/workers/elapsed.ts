import { formatDuration } from '../../lib/format';

/** Elapsed time to the second: "7 s", "2 min 5 s". */
export function elapsed(ms: number): string {
  return ms < 60_000 ? `${Math.floor(ms / 1_000)} s` : formatDuration(ms);
}
