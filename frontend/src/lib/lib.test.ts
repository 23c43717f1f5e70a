import { describe, expect, it } from 'vitest';
import type { DeadLetterItem } from '../api/types';
import { parseBatchCsv, parseBatchJson, parseCsv } from './batch';
import { snapshotPayload } from './deadLetters';
import { parsePayload } from './json';
import { apiFieldErrors, emptyJobForm, validateJobForm } from './jobForm';
import { mergeLines } from './logs';
import { validateScheduleForm, emptyScheduleForm } from './scheduleForm';
import { planSchemaForm } from './schemaFields';
import { builtinSchema, PYDANTIC_SCHEMA } from '../test/jobTypes';

describe('batch parsing', () => {
  it('reads quoted CSV with commas, quotes and line breaks', () => {
    expect(parseCsv('a,b\n"x, y","say ""hi""\nthere"\r\n1,2\n')).toEqual([
      ['a', 'b'],
      ['x, y', 'say "hi"\nthere'],
      ['1', '2'],
    ]);
  });

  it('turns CSV rows into job specs', () => {
    const result = parseBatchCsv(
      'type,priority,ref,dependsOn,payload.to,payload.subject,payload.body,delaySeconds\n' +
        'email,3,a,,x@example.com,Hi,Hello,\n' +
        'email,1,,ref:a;ref:b,y@example.com,"Re: Hi, again",Body,60\n',
      'nightly',
    );
    expect(result).toEqual({
      ok: true,
      batch: {
        name: 'nightly',
        jobs: [
          { type: 'email', priority: 3, ref: 'a', payload: { to: 'x@example.com', subject: 'Hi', body: 'Hello' } },
          {
            type: 'email',
            priority: 1,
            dependsOn: ['ref:a', 'ref:b'],
            delaySeconds: 60,
            payload: { to: 'y@example.com', subject: 'Re: Hi, again', body: 'Body' },
          },
        ],
      },
    });
  });

  it('refuses CSV it cannot map', () => {
    expect(parseBatchCsv('priority\n1')).toMatchObject({ ok: false, error: expect.stringMatching(/"type" column/) });
    expect(parseBatchCsv('type,colour\nemail,red')).toMatchObject({ ok: false, error: 'Unknown column(s): colour' });
    expect(parseBatchCsv('type,priority\nemail,high')).toMatchObject({ ok: false, error: expect.stringMatching(/Row 2: priority/) });
  });

  it('accepts a JSON list or an object with jobs', () => {
    expect(parseBatchJson('[{"type":"simulate","priority":1,"payload":{}}]')).toMatchObject({ ok: true, batch: { jobs: [{ type: 'simulate' }] } });
    expect(parseBatchJson('{"name":"n","jobs":[{"type":"simulate"}]}')).toMatchObject({ ok: true, batch: { name: 'n' } });
    expect(parseBatchJson('[]')).toEqual({ ok: false, error: 'The batch has no jobs.' });
    expect(parseBatchJson('[1]')).toEqual({ ok: false, error: 'Job 1 is not a JSON object.' });
    expect(parseBatchJson('{oops')).toMatchObject({ ok: false, error: expect.stringMatching(/^Not valid JSON/) });
  });
});

describe('log merging', () => {
  it('drops lines that came both ways and orders by time', () => {
    const rest = [
      { id: 1, attempt: 1, workerId: 'w', level: 'info', message: 'sleeping 1 s', at: '2030-01-01T00:00:01.000000Z' },
      { id: 2, attempt: 1, workerId: 'w', level: 'info', message: 'worked', at: '2030-01-01T00:00:02.000000Z' },
    ];
    const live = [
      { jobId: 'j', attempt: 1, level: 'info', message: 'worked', at: '2030-01-01T00:00:02+00:00' },
      { jobId: 'j', attempt: 1, level: 'error', message: 'early', at: '2030-01-01T00:00:00.500Z' },
    ];
    expect(mergeLines(rest, live).map((l) => l.message)).toEqual(['early', 'sleeping 1 s', 'worked']);
  });
});

describe('dead letter payloads', () => {
  it('edits the job payload inside the snapshot', () => {
    const letter = { payloadSnapshot: { type: 'simulate', payload: { seed: 1 }, priority: 2 } } as unknown as DeadLetterItem;
    expect(snapshotPayload(letter)).toEqual({ seed: 1 });
  });

  it('accepts only a JSON object', () => {
    expect(parsePayload('{"a": 1}')).toEqual({ ok: true, value: { a: 1 } });
    expect(parsePayload('[1]')).toEqual({ ok: false, error: 'The payload must be a JSON object' });
    expect(parsePayload('{"a": ')).toMatchObject({ ok: false, error: expect.stringMatching(/^Not valid JSON/) });
  });
});

describe('job form rules', () => {
  it('checks runAt at most a year ahead and never together with a delay', () => {
    const now = new Date('2030-01-01T00:00:00Z');
    const plan = planSchemaForm(builtinSchema('simulate'));
    const values = { ...emptyJobForm(), type: 'simulate', when: 'runAt' as const, runAt: '2031-06-01T00:00' };
    expect(validateJobForm(values, now, plan).errors.runAt).toBe('At most 1 year ahead');
    const ok = validateJobForm({ ...values, runAt: '2030-02-01T10:00' }, now, plan);
    expect(ok.body?.runAt).toBe(new Date('2030-02-01T10:00').toISOString());
    expect(ok.body?.delaySeconds).toBeUndefined();
  });

  it('checks the payload by the type\'s schema, and asks for a type it has no schema of', () => {
    const plan = planSchemaForm(builtinSchema('simulate'));
    const sim = { ...emptyJobForm(), type: 'simulate' };
    sim.payloads = { simulate: { values: { immediateFailureRate: '1.5', failureRate: '', minSeconds: '1', maxSeconds: '4', seed: '' }, raw: '', rawMode: false } };
    expect(validateJobForm(sim, new Date(), plan).errors).toEqual({ 'payload.immediateFailureRate': 'Must be 0 to 1' });
    expect(validateJobForm(emptyJobForm()).errors.type).toBe('Choose a job type');
    expect(validateJobForm({ ...emptyJobForm(), type: 'gone' }).errors.type).toBe('Unknown job type: choose one from the list');
  });

  it('folds dependsOn.N API errors onto the list field', () => {
    expect(
      apiFieldErrors(
        [
          { field: 'dependsOn.1', message: 'unknown job' },
          { field: 'priority', message: 'too big' },
          { field: 'priority', message: 'strict' },
        ],
        ['aaaaaaaa-1', 'bbbbbbbb-2'],
      ),
    ).toEqual({ dependsOn: 'bbbbbbbb: unknown job', priority: 'too big; strict' });
  });
});

describe('schedule form rules', () => {
  it('builds the dashboard body and checks cron and zone', () => {
    const plan = planSchemaForm(builtinSchema('simulate'));
    const values = { ...emptyScheduleForm('Europe/Berlin'), type: 'simulate', name: ' nightly ', cron: ' 0  3 * * * ' };
    values.retry = { ...values.retry, mode: 'named', name: 'gentle' };
    const { body, errors } = validateScheduleForm(values, plan);
    expect(errors).toEqual({});
    expect(body).toEqual({
      name: 'nightly',
      cron: '0 3 * * *',
      timezone: 'Europe/Berlin',
      jobTemplate: {
        type: 'simulate',
        priority: 1,
        payload: { immediateFailureRate: 0, failureRate: 0, minSeconds: 1, maxSeconds: 4 },
        retryPolicyName: 'gentle',
      },
    });
    const bad = validateScheduleForm({ ...values, name: '', cron: '* * *', timezone: 'Nowhere', maxAttempts: '30' }, plan);
    expect(Object.keys(bad.errors).sort()).toEqual(['cron', 'jobTemplate.maxAttempts', 'name', 'timezone']);
  });

  it("builds a custom type's payload from its schema form, and refuses a type it has no form for", () => {
    const plan = planSchemaForm(PYDANTIC_SCHEMA);
    const values = { ...emptyScheduleForm('Europe/Berlin'), name: 'reverse', type: 'acme.reverse' };
    expect(validateScheduleForm(values, plan).errors).toEqual({
      'jobTemplate.payload.text': 'Required',
      'jobTemplate.payload.ratio': 'Required',
    });
    const filled = {
      ...values,
      payloads: { 'acme.reverse': { values: { text: 'hi', ratio: '0.5', shout: 'false' }, raw: '', rawMode: false } },
    };
    expect(validateScheduleForm(filled, plan).body?.jobTemplate).toEqual({
      type: 'acme.reverse',
      priority: 1,
      payload: { text: 'hi', ratio: 0.5, shout: false },
    });
    expect(validateScheduleForm(values).errors).toEqual({ 'jobTemplate.type': 'Unknown job type: choose one from the list' });
  });
});
