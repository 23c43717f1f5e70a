import { describe, expect, it } from 'vitest';
import { PYDANTIC_SCHEMA } from '../test/jobTypes';
import { humanize, planSchemaForm, type SchemaField } from './schemaFields';
import { buildSchemaPayload, foldPayloadErrors, initialSchemaState, switchRawMode, type SchemaPayloadState } from './schemaForm';

function formPlan() {
  const plan = planSchemaForm(PYDANTIC_SCHEMA);
  if (plan.kind !== 'form') throw new Error(plan.reason);
  return plan;
}

const byName = (fields: SchemaField[]) => Object.fromEntries(fields.map((f) => [f.name, f]));

describe('payload schema -> form fields', () => {
  it("reads pydantic's schema: $ref, anyOf with null, enums, bounds, formats", () => {
    const fields = byName(formPlan().fields);
    expect(fields.text).toMatchObject({ kind: 'text', required: true, minLength: 1, maxLength: 20, label: 'Text', description: 'The text to reverse' });
    expect(fields.times).toMatchObject({ kind: 'integer', required: false, minimum: 1, maximum: 5, default: { value: 2 } });
    expect(fields.ratio).toMatchObject({ kind: 'number', required: true, exclusiveMinimum: 0, exclusiveMaximum: 1 });
    expect(fields.color).toMatchObject({ kind: 'choice', options: ['red', 'blue'], nullable: false, default: { value: 'red' } });
    expect(fields.accent).toMatchObject({ kind: 'choice', options: ['red', 'blue'], nullable: true });
    expect(fields.shout).toMatchObject({ kind: 'boolean', default: { value: true } });
    expect(fields.tags).toMatchObject({ kind: 'json', jsonType: 'array' });
    expect(fields.inner).toMatchObject({ kind: 'json', jsonType: 'object', nullable: true });
    // pydantic's generated title ("Notifyon") gives way to the property name, split
    expect(fields.notifyOn).toMatchObject({ kind: 'text', format: 'date', nullable: true, label: 'Notify on' });
  });

  it('keeps a title the author wrote and splits names', () => {
    const plan = planSchemaForm({ type: 'object', properties: { to: { type: 'string', title: 'Recipient' } } });
    expect(plan.kind === 'form' && plan.fields[0]?.label).toBe('Recipient');
    expect(humanize('imageBase64')).toBe('Image base64');
    expect(humanize('max_len')).toBe('Max len');
    expect(humanize('userID')).toBe('User ID');
  });

  it('says why a schema cannot be a form', () => {
    expect(planSchemaForm({ anyOf: [{ type: 'object' }, { type: 'array' }] })).toMatchObject({ kind: 'raw', reason: 'it uses anyOf at the top level' });
    expect(planSchemaForm({ type: 'object' })).toMatchObject({ kind: 'raw', reason: 'it lists no properties' });
    expect(planSchemaForm({ type: 'array', items: {} })).toMatchObject({ kind: 'raw' });
    expect(planSchemaForm({ $ref: '#/$defs/Missing' })).toMatchObject({ kind: 'raw', reason: 'its $ref cannot be resolved' });
    expect(planSchemaForm('nope')).toMatchObject({ kind: 'raw' });
  });

  it('writes what it cannot show as a field of JSON', () => {
    const plan = planSchemaForm({
      type: 'object',
      properties: { mixed: { anyOf: [{ type: 'string' }, { type: 'integer' }] }, loose: {} },
    });
    expect(plan.kind === 'form' && plan.fields.map((f) => [f.name, f.kind, f.jsonType])).toEqual([
      ['mixed', 'json', undefined],
      ['loose', 'json', undefined],
    ]);
  });
});

describe('payload inputs', () => {
  it('starts from the defaults and sends what is filled in (empty optional fields are left out)', () => {
    const plan = formPlan();
    const state = initialSchemaState(plan);
    expect(state.values).toMatchObject({ times: '2', color: '"red"', accent: '', shout: 'true', tags: '[]', text: '' });
    const errors = {};
    const filled: SchemaPayloadState = { ...state, values: { ...state.values, text: 'hello', ratio: '0.25' } };
    expect(buildSchemaPayload(plan, filled, errors)).toEqual({ text: 'hello', times: 2, ratio: 0.25, color: 'red', shout: true, tags: [] });
    expect(errors).toEqual({});
  });

  it('checks like the schema, with the API field paths', () => {
    const plan = formPlan();
    const state = initialSchemaState(plan);
    const errors: Record<string, string> = {};
    const values = { ...state.values, text: 'x'.repeat(21), times: '1.5', ratio: '1', tags: '{"a": 1}', inner: '{oops', notifyOn: '2030-13' };
    buildSchemaPayload(plan, { ...state, values }, errors);
    expect(errors).toEqual({
      'payload.text': 'At most 20 characters',
      'payload.times': 'Enter a whole number',
      'payload.ratio': 'Must be more than 0 and less than 1',
      'payload.tags': 'Enter a JSON array ([…])',
      'payload.inner': expect.stringMatching(/^Not valid JSON/),
      'payload.notifyOn': 'Enter a date (YYYY-MM-DD)',
    });
    const missing: Record<string, string> = {};
    buildSchemaPayload(plan, state, missing);
    expect(missing).toEqual({ 'payload.text': 'Required', 'payload.ratio': 'Required' });
    // an empty required string is refused even where the schema allows "" (raw JSON sends it);
    // a required field that may be null sends null
    const loose = planSchemaForm({
      type: 'object',
      properties: { note: { type: 'string' }, count: { anyOf: [{ type: 'integer' }, { type: 'null' }] } },
      required: ['note', 'count'],
    });
    const looseErrors: Record<string, string> = {};
    expect(buildSchemaPayload(loose, initialSchemaState(loose), looseErrors)).toEqual({ count: null });
    expect(looseErrors).toEqual({ 'payload.note': 'Required' });
  });

  it('switches to raw JSON and back, refusing JSON the form cannot show', () => {
    const plan = formPlan();
    const state = { ...initialSchemaState(plan), values: { ...initialSchemaState(plan).values, text: 'hi', ratio: '0.5' } };
    const raw = switchRawMode(plan, state, true);
    if (!('state' in raw)) throw new Error(raw.error);
    expect(JSON.parse(raw.state.raw)).toEqual({ text: 'hi', times: 2, ratio: 0.5, color: 'red', shout: true, tags: [] });
    const edited = { ...raw.state, raw: '{"text": "ho", "ratio": 0.75, "tags": ["a"], "accent": "blue"}' };
    const back = switchRawMode(plan, edited, false);
    if (!('state' in back)) throw new Error(back.error);
    expect(back.state.rawMode).toBe(false);
    expect(back.state.values).toMatchObject({ text: 'ho', ratio: '0.75', accent: '"blue"', times: '', tags: '[\n  "a"\n]' });
    expect(switchRawMode(plan, { ...edited, raw: '{"extra": 1}' }, false)).toEqual({ error: 'The form has no field for extra' });
    expect(switchRawMode(plan, { ...edited, raw: '{"color": "green"}' }, false)).toEqual({ error: 'The form cannot show the value of color' });
    expect(switchRawMode(plan, { ...edited, raw: '{' }, false)).toMatchObject({ error: expect.stringMatching(/^Not valid JSON/) });
  });

  it("puts the API's payload errors on the inputs that show them", () => {
    const plan = formPlan();
    const state = initialSchemaState(plan);
    const api = {
      'payload.text': "'' is too short",
      'payload.tags.0': '1 is not of type string',
      payload: "'ratio' is a required property",
      'payload.unknown': 'what is this',
      dependsOn: 'unknown job',
    };
    expect(foldPayloadErrors(api, plan, state)).toEqual({
      'payload.text': "'' is too short",
      'payload.tags': '0: 1 is not of type string',
      'payload.ratio': 'Required',
      payload: 'unknown: what is this',
      dependsOn: 'unknown job',
    });
    // in raw JSON every payload problem goes to the text area, with its path
    expect(foldPayloadErrors(api, plan, { ...state, rawMode: true })).toEqual({
      payload: "text: '' is too short; tags.0: 1 is not of type string; 'ratio' is a required property; unknown: what is this",
      dependsOn: 'unknown job',
    });
  });
});
