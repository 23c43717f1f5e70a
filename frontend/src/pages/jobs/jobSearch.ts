/**
 * The jobs list's search box: a job id prefix (8 or more hex digits, with or without the
 * uuid's dashes) or `payload.<field> = <value>` for a top-level payload field. The API is the
 * judge (docs/api.md, "Searching jobs"); this checks the same shapes first so a typo is
 * answered beside the box, before any request.
 */

export const ID_PREFIX_MIN = 8;
export const SEARCH_HINT = 'A job id prefix (8 or more characters) or payload.field = value';

const CANONICAL = 'xxxxxxxx-xxxx-xxxx-xxxx-xxxxxxxxxxxx';
const HEX = /^[0-9a-f]$/;
const PAYLOAD = /^payload\.([^\s=]+)\s*=\s*([\s\S]*)$/;

/** What is wrong with `text` as a search, or null when the API accepts it ('' is no search). */
export function searchProblem(text: string): string | null {
  const value = text.trim();
  if (!value) return null;
  const payload = PAYLOAD.exec(value);
  if (payload) {
    const [, field = '', raw = ''] = payload;
    if (field.includes('.')) return "Only a payload's top-level fields are searchable: payload.field = value.";
    if (!raw.trim()) return 'Give a value: payload.field = value.';
    return null;
  }
  if (value.toLowerCase().startsWith('payload')) return 'Write a payload search as payload.field = value.';
  const lowered = value.toLowerCase();
  const dashed = lowered.includes('-');
  let shaped = lowered.length <= (dashed ? 36 : 32);
  for (let i = 0; shaped && i < lowered.length; i += 1) {
    const char = lowered.charAt(i);
    shaped = dashed && CANONICAL.charAt(i) === '-' ? char === '-' : HEX.test(char);
  }
  if (!shaped) return `Search by ${SEARCH_HINT.charAt(0).toLowerCase()}${SEARCH_HINT.slice(1)}.`;
  if (lowered.replace(/-/g, '').length < ID_PREFIX_MIN)
    return `A job id prefix needs at least ${ID_PREFIX_MIN} characters.`;
  return null;
}
