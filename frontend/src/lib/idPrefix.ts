/**
 * An id filter (a batch's, a schedule's) checked as the API checks it: 8 or more hex digits of
 * the id, as the console shows ids, or the whole id (`GET /api/batches?batchId=`,
 * `GET /api/jobs?batchId=&scheduleId=`).
 */

export const MIN_ID_PREFIX = 8;

/** Why `text` is not an id prefix the API takes, or null (empty: no filter). */
export function idPrefixProblem(text: string): string | null {
  const digits = text.trim().replaceAll('-', '');
  if (!digits) return null;
  if (!/^[0-9a-fA-F]+$/.test(digits)) return 'An id has only the characters 0-9, a-f and dashes';
  if (digits.length < MIN_ID_PREFIX) return `Type at least ${MIN_ID_PREFIX} characters of the id, as shown, or the whole id`;
  if (digits.length > 32) return 'Longer than an id';
  return null;
}
