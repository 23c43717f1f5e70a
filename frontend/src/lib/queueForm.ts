/**
 * A project's queues in the console (docs/frontend.md, "Queues page"): how a queue's limits
 * read in the table, and the form that creates one or changes its limits and defaults.
 *
 * The form holds text; an empty field is "no limit" (or "no default"): left out of a create,
 * sent as `null` in a change, which clears it. A change sends only the fields that differ from
 * the queue as it was read (PATCH: a field left out stays). The checks follow the API's
 * (`libs/common/src/jobs_common/queue_commands.py`); its 422 details land on the same paths.
 */
import type { ConcurrencyKey, QueueCreate, QueuePatch, QueueView, RateLimit, RatePer } from '../api/types';
import { priorityLabel } from './format';

export const QUEUE_NAME = /^[a-z][a-z0-9_-]{0,62}$/;
export const KEY_FIELD = /^[A-Za-z_][A-Za-z0-9_]{0,99}$/;
export const POLICY_NAME = /^[a-z0-9][a-z0-9_-]{0,63}$/;
export const MAX_LIMIT = 100_000;
export const MAX_TIMEOUT_SECONDS = 1_700;

// ---- how a queue reads in the table ----

/** Running jobs against the limit: "3 / 5", "3 / ∞" without one. */
export function formatConcurrency(running: number, max: number | null): string {
  return `${running} / ${max ?? '∞'}`;
}

const PER_SHORT: Record<RatePer, string> = { second: 's', minute: 'min' };

/** "20/s", "600/min", "—" without a rate limit. */
export function formatRate(rate: RateLimit | null): string {
  return rate ? `${rate.limit}/${PER_SHORT[rate.per]}` : '—';
}

/** "customerId ≤ 1", "—" without a concurrency key. */
export function formatConcurrencyKey(key: ConcurrencyKey | null): string {
  return key ? `${key.field} ≤ ${key.limit}` : '—';
}

/** The defaults a queue gives its jobs, one text each ("priority High (3)", "timeout 30 s", "retry fast"). */
export function queueDefaults(queue: QueueView): string[] {
  const out: string[] = [];
  if (queue.defaultPriority !== null) out.push(`priority ${priorityLabel(queue.defaultPriority)} (${queue.defaultPriority})`);
  if (queue.defaultTimeoutSeconds !== null) out.push(`timeout ${queue.defaultTimeoutSeconds} s`);
  if (queue.defaultRetryPolicy !== null) out.push(`retry ${queue.defaultRetryPolicy}`);
  return out;
}

// ---- the form ----

export interface QueueFormValues {
  /** Create only: a queue keeps its name. */
  name: string;
  maxConcurrency: string;
  rateLimit: string;
  ratePer: RatePer;
  keyField: string;
  keyLimit: string;
  /** '' (none), '1', '2' or '3'. */
  defaultPriority: string;
  defaultTimeoutSeconds: string;
  /** '' (none) or a stored retry policy's name. */
  defaultRetryPolicy: string;
  /** Create only: start paused. */
  paused: boolean;
}

/** The form's controls by field path: the API's (its 422 details name the same). */
export const QUEUE_FIELD_PATHS = [
  'name',
  'maxConcurrency',
  'rateLimit.limit',
  'rateLimit.per',
  'concurrencyKey.field',
  'concurrencyKey.limit',
  'defaultPriority',
  'defaultTimeoutSeconds',
  'defaultRetryPolicy',
] as const;

/** What the error summary calls each path (also those of a whole rate limit or key). */
export const QUEUE_FIELD_LABELS: Record<string, string> = {
  name: 'Name',
  maxConcurrency: 'Max concurrency',
  rateLimit: 'Rate limit',
  'rateLimit.limit': 'Rate limit',
  'rateLimit.per': 'Per',
  concurrencyKey: 'Concurrency key',
  'concurrencyKey.field': 'Key field',
  'concurrencyKey.limit': 'Running per key value',
  defaultPriority: 'Default priority',
  defaultTimeoutSeconds: 'Default timeout (seconds)',
  defaultRetryPolicy: 'Default retry policy',
  paused: 'Create paused',
};

const text = (value: number | null | undefined) => (value === null || value === undefined ? '' : String(value));

/** An empty form (a new queue), or one holding `queue`'s limits and defaults. */
export function queueFormValues(queue?: QueueView): QueueFormValues {
  return {
    name: queue?.name ?? '',
    maxConcurrency: text(queue?.maxConcurrency),
    rateLimit: text(queue?.rateLimit?.limit),
    ratePer: queue?.rateLimit?.per ?? 'second',
    keyField: queue?.concurrencyKey?.field ?? '',
    keyLimit: text(queue?.concurrencyKey?.limit),
    defaultPriority: text(queue?.defaultPriority),
    defaultTimeoutSeconds: text(queue?.defaultTimeoutSeconds),
    defaultRetryPolicy: queue?.defaultRetryPolicy ?? '',
    paused: false,
  };
}

/** Every setting of a queue, each a value or null (no limit, no default). */
export interface QueueSettings {
  maxConcurrency: number | null;
  rateLimit: RateLimit | null;
  concurrencyKey: ConcurrencyKey | null;
  defaultPriority: number | null;
  defaultTimeoutSeconds: number | null;
  defaultRetryPolicy: string | null;
}

type Errors = Record<string, string>;

/** A whole number in `min..max` from `raw` (null when empty), or the reason it is not one. */
function wholeNumber(raw: string, min: number, max: number): { value: number | null } | { error: string } {
  const value = raw.trim();
  if (value === '') return { value: null };
  if (!/^\d+$/.test(value)) return { error: `A whole number, ${min} to ${max.toLocaleString('en')}` };
  const n = Number.parseInt(value, 10);
  if (n < min || n > max) return { error: `A whole number, ${min} to ${max.toLocaleString('en')}` };
  return { value: n };
}

/**
 * The settings the form holds, or its errors by field path (under `prefix`, so two forms on
 * one page keep distinct ids). With `create`, the name is checked too.
 */
export function validateQueueForm(
  values: QueueFormValues,
  { create, prefix }: { create: boolean; prefix: string },
): { errors: Errors; settings: QueueSettings | null } {
  const errors: Errors = {};
  const at = (path: string) => `${prefix}.${path}`;
  const number = (path: string, raw: string, min: number, max: number): number | null => {
    const result = wholeNumber(raw, min, max);
    if ('error' in result) {
      errors[at(path)] = result.error;
      return null;
    }
    return result.value;
  };

  if (create) {
    const name = values.name.trim();
    if (name === '') errors[at('name')] = 'Required';
    else if (!QUEUE_NAME.test(name)) {
      errors[at('name')] = '1 to 63 of a-z, 0-9, - and _, starting with a letter';
    }
  }
  const maxConcurrency = number('maxConcurrency', values.maxConcurrency, 1, MAX_LIMIT);
  const rate = number('rateLimit.limit', values.rateLimit, 1, MAX_LIMIT);
  const keyField = values.keyField.trim();
  const keyLimit = number('concurrencyKey.limit', values.keyLimit, 1, MAX_LIMIT);
  if (keyField !== '' && !KEY_FIELD.test(keyField)) {
    errors[at('concurrencyKey.field')] = 'A top-level payload field: letters, digits and _, not starting with a digit';
  }
  if (keyField === '' && values.keyLimit.trim() !== '') errors[at('concurrencyKey.field')] = 'Required with a limit per value';
  if (keyField !== '' && values.keyLimit.trim() === '') errors[at('concurrencyKey.limit')] = 'Required with a key field';
  const priority = values.defaultPriority === '' ? null : Number(values.defaultPriority);
  if (priority !== null && ![1, 2, 3].includes(priority)) errors[at('defaultPriority')] = 'Low (1), Medium (2) or High (3)';
  const timeout = number('defaultTimeoutSeconds', values.defaultTimeoutSeconds, 1, MAX_TIMEOUT_SECONDS);
  const policy = values.defaultRetryPolicy.trim();
  if (policy !== '' && !POLICY_NAME.test(policy)) errors[at('defaultRetryPolicy')] = 'A stored retry policy name';

  if (Object.keys(errors).length > 0) return { errors, settings: null };
  return {
    errors,
    settings: {
      maxConcurrency,
      rateLimit: rate === null ? null : { limit: rate, per: values.ratePer },
      concurrencyKey: keyField === '' || keyLimit === null ? null : { field: keyField, limit: keyLimit },
      defaultPriority: priority,
      defaultTimeoutSeconds: timeout,
      defaultRetryPolicy: policy === '' ? null : policy,
    },
  };
}

/** A create's body: the name, the settings given (none is "no limit"), `paused` when asked. */
export function queueCreateBody(name: string, settings: QueueSettings, paused: boolean): QueueCreate {
  const body: QueueCreate = { name: name.trim() };
  if (settings.maxConcurrency !== null) body.maxConcurrency = settings.maxConcurrency;
  if (settings.rateLimit !== null) body.rateLimit = settings.rateLimit;
  if (settings.concurrencyKey !== null) body.concurrencyKey = settings.concurrencyKey;
  if (settings.defaultPriority !== null) body.defaultPriority = settings.defaultPriority;
  if (settings.defaultTimeoutSeconds !== null) body.defaultTimeoutSeconds = settings.defaultTimeoutSeconds;
  if (settings.defaultRetryPolicy !== null) body.defaultRetryPolicy = settings.defaultRetryPolicy;
  if (paused) body.paused = true;
  return body;
}

const sameRate = (a: RateLimit | null, b: RateLimit | null) => a?.limit === b?.limit && a?.per === b?.per;
const sameKey = (a: ConcurrencyKey | null, b: ConcurrencyKey | null) => a?.field === b?.field && a?.limit === b?.limit;

/** A change's body: only the settings that differ from `queue`, a cleared one as null. */
export function queuePatchBody(queue: QueueView, settings: QueueSettings): QueuePatch {
  const body: QueuePatch = {};
  if (settings.maxConcurrency !== queue.maxConcurrency) body.maxConcurrency = settings.maxConcurrency;
  if (!sameRate(settings.rateLimit, queue.rateLimit)) body.rateLimit = settings.rateLimit;
  if (!sameKey(settings.concurrencyKey, queue.concurrencyKey)) body.concurrencyKey = settings.concurrencyKey;
  if (settings.defaultPriority !== queue.defaultPriority) body.defaultPriority = settings.defaultPriority;
  if (settings.defaultTimeoutSeconds !== queue.defaultTimeoutSeconds) {
    body.defaultTimeoutSeconds = settings.defaultTimeoutSeconds;
  }
  if (settings.defaultRetryPolicy !== queue.defaultRetryPolicy) body.defaultRetryPolicy = settings.defaultRetryPolicy;
  return body;
}
