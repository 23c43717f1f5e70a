import { describe, expect, it } from 'vitest';
import type { QueueView } from '../api/types';
import {
  formatConcurrency,
  formatConcurrencyKey,
  formatRate,
  queueCreateBody,
  queueDefaults,
  queueFormValues,
  queuePatchBody,
  validateQueueForm,
  type QueueFormValues,
} from './queueForm';

const QUEUE: QueueView = {
  id: 'q1',
  projectId: 'p1',
  name: 'emails',
  maxConcurrency: 5,
  rateLimit: { limit: 20, per: 'second' },
  concurrencyKey: { field: 'customerId', limit: 1 },
  paused: false,
  pausedAt: null,
  pausedBy: null,
  defaultPriority: 2,
  defaultTimeoutSeconds: 30,
  defaultRetryPolicy: 'patient',
  createdBy: 'a@example.com',
  createdAt: '2030-01-01T00:00:00Z',
  updatedAt: '2030-01-01T00:00:00Z',
  waiting: 4,
  running: 3,
  oldestQueuedAt: null,
  oldestAgeSeconds: null,
};

const form = (overrides: Partial<QueueFormValues> = {}): QueueFormValues => ({ ...queueFormValues(QUEUE), ...overrides });
const validate = (values: QueueFormValues, create = false) => validateQueueForm(values, { create, prefix: 'f' });

describe('how a queue reads', () => {
  it('shows running jobs against the maximum, the rate, the key and the defaults', () => {
    expect(formatConcurrency(3, 5)).toBe('3 / 5');
    expect(formatConcurrency(3, null)).toBe('3 / ∞');
    expect(formatRate({ limit: 20, per: 'second' })).toBe('20/s');
    expect(formatRate({ limit: 600, per: 'minute' })).toBe('600/min');
    expect(formatRate(null)).toBe('—');
    expect(formatConcurrencyKey({ field: 'customerId', limit: 1 })).toBe('customerId ≤ 1');
    expect(formatConcurrencyKey(null)).toBe('—');
    expect(queueDefaults(QUEUE)).toEqual(['priority Medium (2)', 'timeout 30 s', 'retry patient']);
    expect(queueDefaults({ ...QUEUE, defaultPriority: null, defaultTimeoutSeconds: null, defaultRetryPolicy: null })).toEqual([]);
  });
});

describe('the queue form', () => {
  it("holds a queue's settings as text, and gives them back unchanged", () => {
    const values = queueFormValues(QUEUE);
    expect(values).toMatchObject({ maxConcurrency: '5', rateLimit: '20', ratePer: 'second', keyField: 'customerId', keyLimit: '1' });
    const { errors, settings } = validate(values);
    expect(errors).toEqual({});
    expect(queuePatchBody(QUEUE, settings!)).toEqual({});
  });

  it('sends an emptied field as null, and only the fields changed', () => {
    const { settings } = validate(form({ maxConcurrency: '', defaultRetryPolicy: '', defaultPriority: '3' }));
    expect(queuePatchBody(QUEUE, settings!)).toEqual({ maxConcurrency: null, defaultRetryPolicy: null, defaultPriority: 3 });
  });

  it('clears a rate limit and a key whole, and sends a changed one whole', () => {
    const cleared = validate(form({ rateLimit: '', ratePer: 'minute', keyField: '', keyLimit: '' })).settings!;
    expect(queuePatchBody(QUEUE, cleared)).toEqual({ rateLimit: null, concurrencyKey: null });
    const changed = validate(form({ ratePer: 'minute', keyLimit: '2' })).settings!;
    expect(queuePatchBody(QUEUE, changed)).toEqual({
      rateLimit: { limit: 20, per: 'minute' },
      concurrencyKey: { field: 'customerId', limit: 2 },
    });
  });

  it('leaves out of a create what is empty', () => {
    const values = { ...queueFormValues(), name: ' emails ', rateLimit: '600', ratePer: 'minute' as const };
    const { settings } = validate(values, true);
    expect(queueCreateBody(values.name, settings!, false)).toEqual({ name: 'emails', rateLimit: { limit: 600, per: 'minute' } });
    expect(queueCreateBody(values.name, settings!, true)).toMatchObject({ paused: true });
  });

  it("refuses what the API would, under the form's prefix", () => {
    const { errors, settings } = validate(
      form({ name: '9lives', maxConcurrency: '0', rateLimit: '1.5', keyField: '', keyLimit: '3', defaultTimeoutSeconds: '1701' }),
      true,
    );
    expect(settings).toBeNull();
    expect(errors).toEqual({
      'f.name': '1 to 63 of a-z, 0-9, - and _, starting with a letter',
      'f.maxConcurrency': 'A whole number, 1 to 100,000',
      'f.rateLimit.limit': 'A whole number, 1 to 100,000',
      'f.concurrencyKey.field': 'Required with a limit per value',
      'f.defaultTimeoutSeconds': 'A whole number, 1 to 1,700',
    });
    expect(validate(form({ keyField: 'customer-id' })).errors).toEqual({
      'f.concurrencyKey.field': 'A top-level payload field: letters, digits and _, not starting with a digit',
    });
    expect(validate(form({ name: '' }), true).errors).toEqual({ 'f.name': 'Required' });
    // a change never names the queue
    expect(validate(form({ name: '' }), false).errors).toEqual({});
  });
});
