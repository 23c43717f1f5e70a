import type { DeadLetterItem } from '../api/types';

/** The job's payload inside the snapshot the scheduler kept (`{type, payload, ...}`). */
export function snapshotPayload(letter: DeadLetterItem): Record<string, unknown> {
  const inner = letter.payloadSnapshot.payload;
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner)
    ? (inner as Record<string, unknown>)
    : letter.payloadSnapshot;
}

/** Parse an edited payload: a JSON object, or an error message. */
export function parsePayload(
  text: string,
): { ok: true; value: Record<string, unknown> } | { ok: false; error: string } {
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch (error) {
    return { ok: false, error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    return { ok: false, error: 'The payload must be a JSON object' };
  }
  return { ok: true, value: value as Record<string, unknown> };
}
