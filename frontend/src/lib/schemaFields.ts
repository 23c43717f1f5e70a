/**
 * The fields of a payload form, read from a job type's JSON Schema as `GET /api/job-types`
 * lists it, the built-in types' as any other: pydantic's `model_json_schema(by_alias=True)` of
 * the handler's payload model (docs/sdk.md), so it uses `$defs`/`$ref`, `anyOf: [..., {type:
 * "null"}]` for optional fields, `enum`/`const`, bounds, formats, `contentEncoding`, and the
 * platform's `x-pattern-message` (what a value that misses `pattern` is told).
 *
 * `planSchemaForm` turns the schema into one field per property (text, file, choice, number,
 * integer, boolean, or a JSON text area for arrays, objects and anything else), or says why it
 * cannot (the payload is then written as raw JSON). The inputs themselves: schemaForm.ts.
 */

import { isObject, type JsonObject } from './json';

export type Scalar = string | number | boolean | null;

/** `file`: a string with `contentEncoding: "base64"`, chosen as a file and sent base64-encoded. */
export type SchemaFieldKind = 'text' | 'file' | 'choice' | 'number' | 'integer' | 'boolean' | 'json';

export interface SchemaField {
  /** The property name: the payload key and the last segment of the API field path. */
  name: string;
  label: string;
  description: string | undefined;
  required: boolean;
  /** `null` is allowed (pydantic's `X | None`). */
  nullable: boolean;
  kind: SchemaFieldKind;
  /** The schema's default, when it has one (`{ value }`, since the default may be null). */
  default: { value: unknown } | undefined;
  /** choice: the allowed values. */
  options: readonly Scalar[];
  // text, file (lengths and pattern: of the base64 text)
  format: string | undefined;
  minLength: number | undefined;
  maxLength: number | undefined;
  pattern: string | undefined;
  /** `x-pattern-message`: what a value that does not match `pattern` is told. */
  patternMessage: string | undefined;
  /** file: `contentMediaType` (the file input's `accept`), when the schema says it. */
  mediaType: string | undefined;
  // number, integer
  minimum: number | undefined;
  maximum: number | undefined;
  exclusiveMinimum: number | undefined;
  exclusiveMaximum: number | undefined;
  multipleOf: number | undefined;
  /** json: what the text must parse to (`undefined`: any JSON value). */
  jsonType: 'array' | 'object' | undefined;
}

export type SchemaFormPlan =
  | { kind: 'form'; fields: SchemaField[]; schema: JsonObject }
  | { kind: 'raw'; reason: string; schema: unknown };

/** The keyword of the platform's schemas giving the message of a missed `pattern`. */
export const PATTERN_MESSAGE = 'x-pattern-message';

/** What the inputs of one type's payload hold. */
const LONG_TEXT = 200; // longer strings get a text area
// Root keywords the form cannot honour: the payload is then written as raw JSON.
const UNSUPPORTED_ROOT = ['anyOf', 'oneOf', 'allOf', 'not', 'if', 'patternProperties', 'dependentSchemas', 'dependentRequired'];

function isScalar(value: unknown): value is Scalar {
  return value === null || ['string', 'number', 'boolean'].includes(typeof value);
}

/** The numeric keywords a text field, and a number field, takes from its schema. */
const LENGTH_KEYWORDS = ['minLength', 'maxLength'] as const;
const NUMBER_KEYWORDS = ['minimum', 'maximum', 'exclusiveMinimum', 'exclusiveMaximum', 'multipleOf'] as const;

function num(value: unknown): number | undefined {
  return typeof value === 'number' && Number.isFinite(value) ? value : undefined;
}

function str(value: unknown): string | undefined {
  return typeof value === 'string' ? value : undefined;
}

/** The schema a local `$ref` (`#/$defs/Color`) points at, or null. */
function lookup(root: JsonObject, ref: string): JsonObject | null {
  if (!ref.startsWith('#')) return null;
  let node: unknown = root;
  for (const part of ref.slice(1).split('/').filter(Boolean)) {
    const key = decodeURIComponent(part).replace(/~1/g, '/').replace(/~0/g, '~');
    if (!isObject(node)) return null;
    node = node[key];
  }
  return isObject(node) ? node : null;
}

/** `node` with its `$ref` (and a lone `allOf` entry) replaced by what they point at; the
 * node's own keywords (pydantic puts `default` and `description` beside a `$ref`) win. */
function resolve(node: unknown, root: JsonObject): JsonObject | null {
  if (node === true) return {};
  if (!isObject(node)) return null;
  let current = node;
  for (let depth = 0; ; depth++) {
    if (depth > 32) return null; // a cycle
    if (typeof current.$ref === 'string') {
      const target = lookup(root, current.$ref);
      if (!target) return null;
      const { $ref: _ref, ...rest } = current;
      current = { ...target, ...rest };
    } else if (Array.isArray(current.allOf) && current.allOf.length === 1 && isObject(current.allOf[0])) {
      const { allOf, ...rest } = current;
      current = { ...(allOf[0] as JsonObject), ...rest };
    } else {
      return current;
    }
  }
}

/** pydantic's generated title of a field (`photo_base64` -> "Photo Base64", `photoBase64`
 * -> "Photobase64"): Python's `str.title()`, underscores as spaces. */
function generatedTitle(name: string): string {
  return name
    .replace(/[A-Za-z]+/g, (word) => word.charAt(0).toUpperCase() + word.slice(1).toLowerCase())
    .replace(/_/g, ' ');
}

/** A label from a property name: `photoBase64` -> "Photo base64", `max_len` -> "Max len". */
export function humanize(name: string): string {
  const words = name
    .replace(/([a-z0-9])([A-Z])/g, '$1 $2')
    .split(/[\s_\-.]+/)
    .filter(Boolean)
    .map((word, index) => (index > 0 && /^[A-Z][a-z0-9]*$/.test(word) ? word.toLowerCase() : word));
  const text = words.join(' ');
  return text.charAt(0).toUpperCase() + text.slice(1);
}

function labelOf(name: string, title: unknown): string {
  return typeof title === 'string' && title.trim() && title !== generatedTitle(name) ? title : humanize(name);
}

/** An integer's bounds past what a JavaScript number holds exactly (a signed 64-bit range)
 * say nothing the form can check: every integer it sends is a safe one (schemaForm.ts). */
function dropUnsafeBounds(field: SchemaField): void {
  for (const key of NUMBER_KEYWORDS) {
    const bound = field[key];
    if (key !== 'multipleOf' && bound !== undefined && Math.abs(bound) > Number.MAX_SAFE_INTEGER) field[key] = undefined;
  }
}

function describeField(name: string, node: unknown, root: JsonObject, required: boolean): SchemaField {
  const field: SchemaField = {
    name,
    label: labelOf(name, isObject(node) ? node.title : undefined),
    description: undefined,
    required,
    nullable: false,
    kind: 'json',
    default: undefined,
    options: [],
    format: undefined,
    minLength: undefined,
    maxLength: undefined,
    pattern: undefined,
    patternMessage: undefined,
    mediaType: undefined,
    minimum: undefined,
    maximum: undefined,
    exclusiveMinimum: undefined,
    exclusiveMaximum: undefined,
    multipleOf: undefined,
    jsonType: undefined,
  };
  let schema = resolve(node, root);
  if (!schema) return field; // an unresolvable $ref: write it as JSON
  field.description = str(schema.description);
  if ('default' in schema) field.default = { value: schema.default };

  const variants = Array.isArray(schema.anyOf) ? schema.anyOf : Array.isArray(schema.oneOf) ? schema.oneOf : null;
  if (variants) {
    const resolved = variants.map((variant) => resolve(variant, root));
    if (resolved.some((variant) => variant === null)) return field;
    const others = (resolved as JsonObject[]).filter((variant) => variant.type !== 'null');
    field.nullable = others.length < resolved.length;
    const { anyOf: _anyOf, oneOf: _oneOf, ...outer } = schema;
    if (others.length === 1) {
      schema = { ...others[0], ...outer };
    } else if (others.length > 1 && others.every((v) => 'const' in v || Array.isArray(v.enum))) {
      schema = { ...outer, enum: others.flatMap((v) => ('const' in v ? [v.const] : (v.enum as unknown[]))) };
    } else {
      return field;
    }
  }

  let type = schema.type;
  if (Array.isArray(type)) {
    const types = type.filter((t) => t !== 'null');
    if (types.length < type.length) field.nullable = true;
    if (types.length !== 1) return field;
    type = types[0];
  }

  const choices = 'const' in schema ? [schema.const] : Array.isArray(schema.enum) ? schema.enum : null;
  if (choices) {
    if (!choices.every(isScalar)) return field;
    if (choices.includes(null)) field.nullable = true;
    field.kind = 'choice';
    field.options = choices.filter((choice) => choice !== null);
    return field;
  }

  switch (type) {
    case 'string':
      field.kind = schema.contentEncoding === 'base64' ? 'file' : 'text';
      field.format = str(schema.format);
      for (const key of LENGTH_KEYWORDS) field[key] = num(schema[key]);
      field.pattern = str(schema.pattern);
      field.patternMessage = str(schema[PATTERN_MESSAGE]);
      field.mediaType = str(schema.contentMediaType);
      return field;
    case 'integer':
    case 'number':
      field.kind = type;
      for (const key of NUMBER_KEYWORDS) field[key] = num(schema[key]);
      if (type === 'integer') dropUnsafeBounds(field);
      return field;
    case 'boolean':
      field.kind = 'boolean';
      return field;
    case 'array':
    case 'object':
      field.jsonType = type;
      return field;
    default:
      return field;
  }
}

/** The form for a payload schema, or why there is none (the payload is then raw JSON). */
export function planSchemaForm(schema: unknown): SchemaFormPlan {
  const raw = (reason: string): SchemaFormPlan => ({ kind: 'raw', reason, schema });
  if (!isObject(schema)) return raw('the schema is not a JSON object');
  const root = resolve(schema, schema);
  if (!root) return raw('its $ref cannot be resolved');
  const unsupported = UNSUPPORTED_ROOT.find((keyword) => keyword in root);
  if (unsupported) return raw(`it uses ${unsupported} at the top level`);
  if (root.type !== undefined && root.type !== 'object') return raw('the payload it describes is not an object');
  if (!isObject(root.properties) || Object.keys(root.properties).length === 0) {
    return raw('it lists no properties');
  }
  const required = new Set(Array.isArray(root.required) ? root.required.filter((r) => typeof r === 'string') : []);
  const fields = Object.entries(root.properties).map(([name, node]) =>
    describeField(name, node, schema, required.has(name)),
  );
  return { kind: 'form', fields, schema };
}

/** What a payload schema says of the whole payload: its `title` and `description`. */
export function schemaSummary(schema: unknown): { title: string | undefined; description: string | undefined } {
  if (!isObject(schema)) return { title: undefined, description: undefined };
  const title = str(schema.title)?.trim();
  const description = str(schema.description)?.replace(/\s+/g, ' ').trim();
  return { title: title || undefined, description: description || undefined };
}

// ---- how a field is shown ----

/** Does a boolean field need a third state ("not set") instead of a checkbox? */
export function isTristate(field: SchemaField): boolean {
  return field.nullable || (!field.required && typeof field.default?.value !== 'boolean');
}

/** Does a text field get a text area? */
export function isMultiline(field: SchemaField): boolean {
  return field.kind === 'text' && !field.format && (field.maxLength ?? 0) > LONG_TEXT;
}

export function formatNumber(value: number): string {
  return value.toLocaleString('en-US', { maximumFractionDigits: 20 });
}

/** The largest file whose base64 text fits in `maxLength` characters, or undefined. */
export function maxFileBytes(field: SchemaField): number | undefined {
  return field.maxLength === undefined ? undefined : Math.floor(field.maxLength / 4) * 3;
}

/** A byte count in words: "5 MB", "300 KB", "12 bytes". */
export function formatBytes(bytes: number): string {
  const round = (value: number) => formatNumber(Math.round(value * 10) / 10);
  if (bytes >= 1024 * 1024) return `${round(bytes / (1024 * 1024))} MB`;
  if (bytes >= 1024) return `${round(bytes / 1024)} KB`;
  return `${formatNumber(bytes)} bytes`;
}

/** The message of a value that misses the field's `pattern`: `x-pattern-message`, else the pattern. */
export function patternError(field: SchemaField): string {
  const message = field.patternMessage?.trim();
  return message ? message.charAt(0).toUpperCase() + message.slice(1) : `Must match ${field.pattern ?? ''}`;
}

/** What a number field accepts, in words ("0 to 5", "more than 0"), or undefined. */
export function numberRange(field: SchemaField): string | undefined {
  const low = field.minimum ?? field.exclusiveMinimum;
  const high = field.maximum ?? field.exclusiveMaximum;
  const lowOpen = field.minimum === undefined && field.exclusiveMinimum !== undefined;
  const highOpen = field.maximum === undefined && field.exclusiveMaximum !== undefined;
  if (low !== undefined && high !== undefined) {
    if (!lowOpen && !highOpen) return `${formatNumber(low)} to ${formatNumber(high)}`;
    return `${lowOpen ? 'more than' : 'at least'} ${formatNumber(low)} and ${highOpen ? 'less than' : 'at most'} ${formatNumber(high)}`;
  }
  if (low !== undefined) return `${lowOpen ? 'more than' : 'at least'} ${formatNumber(low)}`;
  if (high !== undefined) return `${highOpen ? 'less than' : 'at most'} ${formatNumber(high)}`;
  return undefined;
}

// ---- help text ----

const FORMAT_WORDS: Record<string, string> = {
  email: 'An email address',
  uri: 'A URL',
  date: 'A date',
  'date-time': 'A date and time (your local time)',
  uuid: 'A UUID',
};

function sentence(text: string): string {
  const trimmed = text.trim();
  return /[.!?:]$/.test(trimmed) ? trimmed : `${trimmed}.`;
}

/** The help text of a field: its description, then what it accepts. */
export function fieldHint(field: SchemaField): string | undefined {
  const parts: string[] = [];
  if (field.description?.trim()) parts.push(sentence(field.description));
  switch (field.kind) {
    case 'text': {
      if (field.format && FORMAT_WORDS[field.format]) parts.push(sentence(FORMAT_WORDS[field.format] ?? ''));
      const { minLength: min, maxLength: max } = field;
      if (min !== undefined && max !== undefined) parts.push(`${formatNumber(min)} to ${formatNumber(max)} characters.`);
      else if (max !== undefined) parts.push(`At most ${formatNumber(max)} characters.`);
      else if (min !== undefined && min > 0) parts.push(`At least ${formatNumber(min)} characters.`);
      // a pattern with a message of its own is told when missed, not shown as a regex
      if (field.pattern && !field.patternMessage) parts.push(`Pattern ${field.pattern}`);
      break;
    }
    case 'file': {
      const bytes = maxFileBytes(field);
      parts.push(bytes === undefined ? 'A file.' : `A file of at most ${formatBytes(bytes)}.`);
      break;
    }
    case 'number':
    case 'integer': {
      const range = numberRange(field);
      const what = field.kind === 'integer' ? 'A whole number' : 'A number';
      parts.push(range ? `${what}, ${range}.` : `${what}.`);
      break;
    }
    case 'json':
      parts.push(field.jsonType === 'array' ? 'A JSON array.' : field.jsonType === 'object' ? 'A JSON object.' : 'Any JSON value.');
      break;
    default:
      break;
  }
  if (!field.required && !(field.kind === 'boolean' && !isTristate(field))) parts.push('Optional: empty is not sent.');
  else if (field.required && field.nullable) parts.push('Empty sends null.');
  return parts.length > 0 ? parts.join(' ') : undefined;
}
