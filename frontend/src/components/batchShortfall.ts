/**
 * Why a batch has fewer members in the job store than it was submitted with. A batch is
 * accepted whole (docs/submission.md), so a member is missing only while it is on its way:
 * waiting in the submission service's outbox (the relay publishes it; a broker outage holds
 * it there), or published and not yet read by the scheduler (`jobs.submitted`). One the
 * scheduler cannot record is kept in its poison messages (docs/architecture.md), never
 * dropped: that is the only way a batch stays short.
 */
import type { BatchStatusPublic, BatchView } from '../api/types';

/** After this long, members published and still not recorded are more likely refused than late. */
export const STUCK_AFTER_MS = 5 * 60_000;

export interface Shortfall {
  missing: number;
  reason: string;
}

function jobs(n: number): string {
  return n === 1 ? '1 job' : `${n} jobs`;
}

/**
 * `published`: the submission service's view of the batch (`undefined` while unknown,
 * `null` once it answered 404: the batch is past its retention there).
 */
export function batchShortfall(
  run: Pick<BatchView, 'total' | 'recorded' | 'createdAt'>,
  published: Pick<BatchStatusPublic, 'size' | 'published'> | null | undefined,
  now: number = Date.now(),
): Shortfall | null {
  const missing = run.total - run.recorded;
  if (missing <= 0) return null;
  const refused =
    'if they stay missing, the scheduler could not record them: an operator finds them in its poison messages';
  if (published === undefined) {
    return { missing, reason: `${jobs(missing)} not recorded by the scheduler yet.` };
  }
  if (published === null) {
    return {
      missing,
      reason: `${jobs(missing)} never recorded; the submission service no longer keeps the batch (past its retention), so ${refused}.`,
    };
  }
  const unpublished = Math.max(0, published.size - published.published);
  const inTransit = Math.max(0, missing - unpublished);
  const parts: string[] = [];
  if (unpublished > 0) {
    parts.push(
      `${jobs(unpublished)} still in the submission service's outbox, not published yet (the relay retries them; a broker outage holds them there)`,
    );
  }
  if (inTransit > 0) {
    const stuck = now - Date.parse(run.createdAt) >= STUCK_AFTER_MS;
    parts.push(
      stuck
        ? `${jobs(inTransit)} published but not recorded by the scheduler after ${Math.round((now - Date.parse(run.createdAt)) / 60_000)} min; ${refused}`
        : `${jobs(inTransit)} published and on their way to the scheduler`,
    );
  }
  return { missing, reason: `${parts.join('; ')}.` };
}
