import type { JobTypeInfo } from '../api/types';
import BUILTIN_PAYLOAD_SCHEMAS from './builtinPayloadSchemas.json';

/** A job type as GET /api/job-types lists it (a custom one unless `overrides.builtin`). */
export function jobType(type: string, overrides: Partial<JobTypeInfo> = {}): JobTypeInfo {
  const builtin = overrides.builtin ?? false;
  return {
    type,
    builtin,
    payloadSchema: { type: 'object', properties: {} },
    resultSchema: null,
    queue: 'default',
    timeoutSeconds: builtin ? null : 30,
    maxAttempts: builtin ? null : 5,
    slots: 1,
    liveWorkers: 1,
    announcedAt: builtin ? null : '2030-01-01T00:00:00Z',
    ...overrides,
  };
}

/**
 * The built-in types as a worker announces them: their payload schemas are the worker's models'
 * (builtinPayloadSchemas.json, kept equal to jobs_worker/handlers/payloads.py by
 * tests/architecture/test_one_type_registry.py).
 */
export const builtinTypes = (): JobTypeInfo[] =>
  Object.entries(BUILTIN_PAYLOAD_SCHEMAS).map(([type, payloadSchema]) =>
    jobType(type, { builtin: true, payloadSchema, liveWorkers: 2, announcedAt: '2030-01-01T00:00:00Z' }),
  );

/** The payload schema of the built-in type `type` (builtinPayloadSchemas.json). */
export function builtinSchema(type: keyof typeof BUILTIN_PAYLOAD_SCHEMAS): JobTypeInfo['payloadSchema'] {
  return BUILTIN_PAYLOAD_SCHEMAS[type];
}

/** What pydantic's model_json_schema(by_alias=True) writes for a payload model with one field
 * of each kind the form renders (as a handler module would declare it). */
export const PYDANTIC_SCHEMA = {
  $defs: {
    Color: { enum: ['red', 'blue'], title: 'Color', type: 'string' },
    Inner: { properties: { a: { default: 1, title: 'A', type: 'integer' } }, title: 'Inner', type: 'object' },
  },
  additionalProperties: false,
  properties: {
    text: { description: 'The text to reverse', maxLength: 20, minLength: 1, title: 'Text', type: 'string' },
    times: { default: 2, maximum: 5, minimum: 1, title: 'Times', type: 'integer' },
    ratio: { exclusiveMaximum: 1, exclusiveMinimum: 0, title: 'Ratio', type: 'number' },
    color: { $ref: '#/$defs/Color', default: 'red' },
    accent: { anyOf: [{ $ref: '#/$defs/Color' }, { type: 'null' }], default: null },
    shout: { default: true, title: 'Shout', type: 'boolean' },
    tags: { default: [], items: { type: 'string' }, title: 'Tags', type: 'array' },
    inner: { anyOf: [{ $ref: '#/$defs/Inner' }, { type: 'null' }], default: null },
    notifyOn: { anyOf: [{ format: 'date', type: 'string' }, { type: 'null' }], default: null, title: 'Notifyon' },
  },
  required: ['text', 'ratio'],
  title: 'Reverse',
  type: 'object',
} as const;

/** The first options of a list's type filter with `builtinTypes()` listed: "Any" (''), then
 * the built-ins (the registry's `builtin` flag) by name. */
export const BUILTIN_FILTER_OPTIONS = ['', 'email', 'image_resize', 'report_generation', 'simulate'] as const;
