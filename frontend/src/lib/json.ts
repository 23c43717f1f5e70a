/** JSON a user wrote (a payload in raw JSON, a requeue's edited payload, a batch). */

export type Parsed<T> = { ok: true; value: T } | { ok: false; error: string };

export type JsonObject = Record<string, unknown>;

/** A JSON object (not null, not an array). */
export function isObject(value: unknown): value is JsonObject {
  return typeof value === 'object' && value !== null && !Array.isArray(value);
}

/** Parse JSON text; the error says why it is not valid JSON. */
export function parseJson(text: string): Parsed<unknown> {
  try {
    return { ok: true, value: JSON.parse(text) as unknown };
  } catch (error) {
    return { ok: false, error: `Not valid JSON: ${error instanceof Error ? error.message : String(error)}` };
  }
}

/** Parse a payload written as JSON: a JSON object, or an error message. */
export function parsePayload(text: string): Parsed<JsonObject> {
  const parsed = parseJson(text);
  if (!parsed.ok) return parsed;
  return isObject(parsed.value) ? { ok: true, value: parsed.value } : { ok: false, error: 'The payload must be a JSON object' };
}
