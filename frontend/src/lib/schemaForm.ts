/**
 * The inputs of a payload form built from a JSON Schema (the fields: schemaFields.ts). Values
 * are kept as the strings the inputs hold; `buildSchemaPayload` checks them as the submission
 * service will (it validates with the same schema) and builds the payload, with errors keyed
 * by the API's field paths (`payload.text`), so a 422's details land on the same inputs
 * (`foldPayloadErrors`). Raw JSON is the way out for what the form cannot show.
 */
import { isoToLocalInput, localInputToIso, prettyJson } from './format';
import type { FieldErrors } from './jobForm';
import { isObject, parseJson, parsePayload } from './json';
import {
  formatNumber,
  isTristate,
  numberRange,
  patternError,
  type SchemaField,
  type SchemaFormPlan,
} from './schemaFields';

/** What the inputs of one type's payload hold. */
export interface SchemaPayloadState {
  /** Input text per property (checkbox: `'true'`/`'false'`; choice: the JSON of the value;
   * file: its base64 text). */
  values: Record<string, string>;
  /** The name of the file chosen for a file field, while its value is that file's. */
  fileNames?: Record<string, string>;
  raw: string;
  rawMode: boolean;
}

// ---- values ----

/** The input text for a JSON value, or null when the field cannot hold it. */
export function inputText(field: SchemaField, value: unknown): string | null {
  if (value === null || value === undefined) return '';
  switch (field.kind) {
    case 'text':
      if (typeof value !== 'string') return null;
      return field.format === 'date-time' ? isoToLocalInput(value) || value : value;
    case 'file':
      return typeof value === 'string' ? value : null;
    case 'number':
    case 'integer':
      return typeof value === 'number' ? String(value) : null;
    case 'boolean':
      return typeof value === 'boolean' ? String(value) : null;
    case 'choice':
      return field.options.some((option) => option === value) ? JSON.stringify(value) : null;
    case 'json':
      return prettyJson(value);
  }
}

function defaultText(field: SchemaField): string {
  if (field.default) return inputText(field, field.default.value) ?? '';
  if (field.kind === 'choice' && field.required && field.options.length === 1) return JSON.stringify(field.options[0]);
  if (field.kind === 'boolean' && !isTristate(field)) return 'false';
  return '';
}

/** The inputs of a freshly chosen type: the schema's defaults filled in. */
export function initialSchemaState(plan: SchemaFormPlan): SchemaPayloadState {
  if (plan.kind === 'raw') return { values: {}, raw: '{}', rawMode: true };
  const values = Object.fromEntries(plan.fields.map((field) => [field.name, defaultText(field)]));
  const state = { values, raw: '', rawMode: false };
  return { ...state, raw: prettyJson(buildSchemaPayload(plan, state, {})) };
}

// ---- checks ----

export type Read = { omit: true } | { value: unknown } | { error: string };

const EMAIL = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;
const DATE = /^\d{4}-\d{2}-\d{2}$/;
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const NUMBER = /^-?\d+(\.\d+)?([eE][-+]?\d+)?$/;

function isUrl(text: string): boolean {
  try {
    new URL(text);
    return true;
  } catch {
    return false;
  }
}

function empty(field: SchemaField, missing: string): Read {
  if (!field.required) return { omit: true };
  return field.nullable ? { value: null } : { error: missing };
}

export function readText(field: SchemaField, text: string): Read {
  // a required string left empty is refused, though the schema may allow "" (raw JSON sends it)
  if (text === '') return empty(field, field.kind === 'file' ? 'Choose a file' : 'Required');
  let value = text;
  switch (field.format) {
    case 'email':
      if (!EMAIL.test(text.trim())) return { error: 'Enter a valid email address' };
      value = text.trim();
      break;
    case 'date':
      if (!DATE.test(text)) return { error: 'Enter a date (YYYY-MM-DD)' };
      break;
    case 'date-time': {
      const iso = localInputToIso(text);
      if (!iso) return { error: 'Enter a date and time' };
      value = iso;
      break;
    }
    case 'uri':
      if (!isUrl(text)) return { error: 'Enter a URL (https://…)' };
      break;
    case 'uuid':
      if (!UUID.test(text.trim())) return { error: 'Enter a UUID' };
      value = text.trim();
      break;
    default:
      break;
  }
  const length = Array.from(value).length; // JSON Schema counts code points, not UTF-16 units
  if (field.minLength !== undefined && length < field.minLength) return { error: `At least ${formatNumber(field.minLength)} characters` };
  if (field.maxLength !== undefined && length > field.maxLength) return { error: `At most ${formatNumber(field.maxLength)} characters` };
  if (field.pattern !== undefined) {
    let pattern: RegExp | null = null;
    try {
      pattern = new RegExp(field.pattern, 'u');
    } catch {
      pattern = null; // a Python-only pattern: left to the API
    }
    if (pattern && !pattern.test(value)) return { error: patternError(field) };
  }
  return { value };
}

function readNumber(field: SchemaField, text: string): Read {
  const trimmed = text.trim();
  if (trimmed === '') return empty(field, 'Required');
  if (!NUMBER.test(trimmed)) return { error: field.kind === 'integer' ? 'Enter a whole number' : 'Enter a number' };
  const value = Number(trimmed);
  if (field.kind === 'integer' && !Number.isInteger(value)) return { error: 'Enter a whole number' };
  if (field.kind === 'integer' && !Number.isSafeInteger(value)) {
    // JSON would carry it rounded: beyond ±2^53 - 1 the form cannot send a whole number exactly
    return { error: `Enter a whole number between ${formatNumber(-Number.MAX_SAFE_INTEGER)} and ${formatNumber(Number.MAX_SAFE_INTEGER)}` };
  }
  const outside =
    (field.minimum !== undefined && value < field.minimum) ||
    (field.maximum !== undefined && value > field.maximum) ||
    (field.exclusiveMinimum !== undefined && value <= field.exclusiveMinimum) ||
    (field.exclusiveMaximum !== undefined && value >= field.exclusiveMaximum);
  if (outside) return { error: `Must be ${numberRange(field) ?? 'in range'}` };
  if (field.multipleOf !== undefined && field.multipleOf > 0) {
    const ratio = value / field.multipleOf;
    if (Math.abs(ratio - Math.round(ratio)) > 1e-9) return { error: `Must be a multiple of ${formatNumber(field.multipleOf)}` };
  }
  return { value };
}

function readJson(field: SchemaField, text: string): Read {
  if (text.trim() === '') return empty(field, 'Required');
  const parsed = parseJson(text);
  if (!parsed.ok) return { error: parsed.error };
  const value = parsed.value;
  if (value === null && field.nullable) return { value };
  if (field.jsonType === 'array' && !Array.isArray(value)) return { error: 'Enter a JSON array ([…])' };
  if (field.jsonType === 'object' && !isObject(value)) return { error: 'Enter a JSON object ({…})' };
  return { value };
}

function readField(field: SchemaField, text: string): Read {
  switch (field.kind) {
    case 'text':
    case 'file':
      return readText(field, text);
    case 'number':
    case 'integer':
      return readNumber(field, text);
    case 'boolean':
      return text === '' ? empty(field, 'Choose yes or no') : { value: text === 'true' };
    case 'choice':
      return text === '' ? empty(field, 'Choose one') : { value: JSON.parse(text) as unknown };
    case 'json':
      return readJson(field, text);
  }
}

/** Check the inputs and build the payload; problems go to `errors` under `${prefix}.<name>`
 * (raw JSON: under `prefix`). What could not be read is left out of the payload. */
export function buildSchemaPayload(
  plan: SchemaFormPlan,
  state: SchemaPayloadState,
  errors: FieldErrors,
  prefix = 'payload',
): Record<string, unknown> {
  if (plan.kind === 'raw' || state.rawMode) {
    const parsed = parsePayload(state.raw);
    if (!parsed.ok) {
      errors[prefix] = parsed.error;
      return {};
    }
    return parsed.value;
  }
  const payload: Record<string, unknown> = {};
  for (const field of plan.fields) {
    const read = readField(field, state.values[field.name] ?? '');
    if ('error' in read) errors[`${prefix}.${field.name}`] = read.error;
    else if ('value' in read) payload[field.name] = read.value;
  }
  return payload;
}

/** Switch the inputs to raw JSON (the payload as the form would send it) or back to the form
 * (refused, with the reason, when the JSON does not fit the form's fields). */
export function switchRawMode(
  plan: SchemaFormPlan,
  state: SchemaPayloadState,
  rawMode: boolean,
): { state: SchemaPayloadState } | { error: string } {
  if (plan.kind === 'raw') return { state };
  if (rawMode) return { state: { ...state, rawMode, raw: prettyJson(buildSchemaPayload(plan, state, {})) } };
  const parsed = parsePayload(state.raw);
  if (!parsed.ok) return { error: `${parsed.error}: fix it to go back to the form` };
  const names = new Set(plan.fields.map((field) => field.name));
  const unknown = Object.keys(parsed.value).filter((key) => !names.has(key));
  if (unknown.length > 0) return { error: `The form has no field for ${unknown.join(', ')}` };
  const values: Record<string, string> = {};
  for (const field of plan.fields) {
    const text = inputText(field, parsed.value[field.name]);
    if (text === null) return { error: `The form cannot show the value of ${field.name}` };
    values[field.name] = text;
  }
  // a file's name stays with its value only when the JSON left that value as it was
  const fileNames = Object.fromEntries(
    Object.entries(state.fileNames ?? {}).filter(([name]) => values[name] === state.values[name]),
  );
  return { state: { ...state, values, fileNames, rawMode } };
}

/**
 * Put the API's payload errors where the form shows them: `payload.<name>.<rest>` on the
 * field `<name>` (a JSON text area for nested values: "rest: message"), the schema's
 * "'<name>' is a required property" (reported on `payload`) on that field, and the rest on
 * `payload` itself. In raw JSON every payload error goes to `payload`, with its path.
 */
export function foldPayloadErrors(
  errors: FieldErrors,
  plan: SchemaFormPlan,
  state: SchemaPayloadState,
  prefix = 'payload',
): FieldErrors {
  const names =
    plan.kind === 'form' && !state.rawMode ? plan.fields.map((f) => f.name).sort((a, b) => b.length - a.length) : [];
  const folded: FieldErrors = {};
  const add = (key: string, message: string) => {
    folded[key] = folded[key] ? `${folded[key]}; ${message}` : message;
  };
  for (const [key, message] of Object.entries(errors)) {
    if (key === prefix) {
      const missing = /^'(.+)' is a required property$/.exec(message)?.[1];
      if (missing !== undefined && names.includes(missing)) add(`${prefix}.${missing}`, 'Required');
      else add(prefix, message);
      continue;
    }
    if (!key.startsWith(`${prefix}.`)) {
      add(key, message);
      continue;
    }
    const path = key.slice(prefix.length + 1);
    const name = names.find((n) => path === n || path.startsWith(`${n}.`));
    if (name === undefined) add(prefix, `${path}: ${message}`);
    else if (path === name) add(`${prefix}.${name}`, message);
    else add(`${prefix}.${name}`, `${path.slice(name.length + 1)}: ${message}`);
  }
  return folded;
}
