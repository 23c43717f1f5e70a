import { isBuiltinType, JOB_TYPES, type JobTypeInfo } from '../api/types';

/** A job type as GET /api/job-types lists it (a custom one unless `builtin`). */
export function jobType(type: string, overrides: Partial<JobTypeInfo> = {}): JobTypeInfo {
  const builtin = isBuiltinType(type);
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

export const builtinTypes = (): JobTypeInfo[] => JOB_TYPES.map((type) => jobType(type, { liveWorkers: 2 }));

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

/** The first options of a list's type filter: "Any" (''), then the built-ins in their fixed order. */
export const BUILTIN_FILTER_OPTIONS = ['', 'email', 'image_resize', 'report_generation', 'simulate'] as const;
