/** The job types as the registry lists them, and the built-ins' schemas read like any other. */
import { describe, expect, it } from 'vitest';
import { builtinSchema, builtinTypes, jobType, PYDANTIC_SCHEMA } from '../test/jobTypes';
import { parseBatchCsv, parseBatchJson } from './batch';
import { batchCsvExample, batchJsonExample } from './batchExamples';
import { readFileField } from './fileField';
import { defaultJobType, orderedTypes, payloadFieldLabels, sendableAsIs, typeFilterOptions } from './jobTypes';
import { fieldHint, isMultiline, planSchemaForm, type SchemaField } from './schemaFields';
import { buildSchemaPayload, initialSchemaState } from './schemaForm';

function fieldsOf(schema: unknown): Record<string, SchemaField> {
  const plan = planSchemaForm(schema);
  if (plan.kind !== 'form') throw new Error(plan.reason);
  return Object.fromEntries(plan.fields.map((field) => [field.name, field]));
}

describe('the type list', () => {
  it('puts the built-ins (by their flag) first, then the custom types, each by name', () => {
    const listed = [jobType('zeta.last'), jobType('b.builtin', { builtin: true }), jobType('acme.x'), jobType('a.builtin', { builtin: true })];
    expect(orderedTypes(listed).map((t) => t.type)).toEqual(['a.builtin', 'b.builtin', 'acme.x', 'zeta.last']);
    expect(typeFilterOptions(listed, 'gone')).toEqual(['a.builtin', 'b.builtin', 'acme.x', 'zeta.last', 'gone']);
    expect(typeFilterOptions(undefined, '')).toEqual([]); // no list: no type of its own
  });

  it('starts a form on the first type a live worker serves that its defaults make whole', () => {
    const planOf = (info: { payloadSchema: unknown }) => planSchemaForm(info.payloadSchema);
    expect(defaultJobType(builtinTypes(), planOf)).toBe('simulate');
    const idle = builtinTypes().map((t) => (t.type === 'simulate' ? { ...t, liveWorkers: 0 } : t));
    expect(defaultJobType(idle, planOf)).toBe('email'); // none sendable as is: the first served
    expect(defaultJobType([jobType('acme.reverse', { payloadSchema: PYDANTIC_SCHEMA, liveWorkers: 0 })], planOf)).toBe('acme.reverse');
    expect(defaultJobType([], planOf)).toBe('');
    expect(sendableAsIs(planSchemaForm(builtinSchema('email')))).toBe(false);
  });

  it("labels a form's payload paths from the schema's titles", () => {
    expect(payloadFieldLabels(planSchemaForm(builtinSchema('report_generation')), false, 'jobTemplate.payload')).toEqual({
      'jobTemplate.payload.reportType': 'Report',
      'jobTemplate.payload.from': 'From',
      'jobTemplate.payload.to': 'To',
      'jobTemplate.payload.format': 'Format',
    });
    expect(payloadFieldLabels(planSchemaForm(builtinSchema('email')), true)).toEqual({});
  });
});

describe("the built-in types' schemas, read by the generic form", () => {
  it('takes titles, patterns with their messages, a text area for a long text', () => {
    const { to, subject, body } = fieldsOf(builtinSchema('email'));
    expect([to?.label, subject?.label, body?.label]).toEqual(['To', 'Subject', 'Body']);
    expect(subject?.patternMessage).toBe('must not contain control characters or line breaks');
    expect(fieldHint(subject!)).not.toMatch(/Pattern/); // told when missed, not shown as a regex
    expect(isMultiline(body!)).toBe(true);
    expect(isMultiline(subject!)).toBe(false);
  });

  it('reads contentEncoding base64 as a file, and drops integer bounds past the safe range', () => {
    const { imageBase64, width } = fieldsOf(builtinSchema('image_resize'));
    expect(imageBase64?.kind).toBe('file');
    expect(width).toMatchObject({ kind: 'integer', minimum: 1, maximum: 10_000 });
    const { seed } = fieldsOf(builtinSchema('simulate'));
    expect(seed).toMatchObject({ kind: 'integer', nullable: true, minimum: undefined, maximum: undefined });
  });

  it("checks a chosen file's base64 against the field's pattern and size", async () => {
    const { imageBase64 } = fieldsOf(builtinSchema('image_resize'));
    const png = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 1, 2, 3]);
    expect(await readFileField(imageBase64!, new Blob([png]))).toEqual({ value: btoa(String.fromCharCode(...png)) });
    expect(await readFileField(imageBase64!, new Blob(['GIF89a']))).toEqual({ error: 'Must be a PNG, JPEG or WebP image in base64' });
  });
});

describe('the batch examples', () => {
  it('are written for a listed type with its defaults, and parse back to that', () => {
    const plan = planSchemaForm(builtinSchema('simulate'));
    const payload = buildSchemaPayload(plan, initialSchemaState(plan), {});
    const json = parseBatchJson(batchJsonExample('simulate', payload));
    expect(json.ok && json.batch.jobs.map((job) => [job.type, job.payload, job.dependsOn])).toEqual([
      ['simulate', payload, undefined],
      ['simulate', payload, ['ref:extract']],
    ]);
    const csv = parseBatchCsv(batchCsvExample('simulate', payload));
    expect(csv.ok && csv.batch.jobs.map((job) => job.payload)).toEqual([payload, payload]);
    const nested = parseBatchCsv(batchCsvExample('acme.x', { tags: ['a', 'b'], text: 'say "hi", twice' }));
    expect(nested.ok && nested.batch.jobs[0]?.payload).toEqual({ tags: ['a', 'b'], text: 'say "hi", twice' });
  });
});
