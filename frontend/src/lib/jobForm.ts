/**
 * The submit form's model and its client-side validation: the same rules the submission
 * service enforces (services/submission/.../domain/requests.py, fields.py); the payload of
 * every type, built-in or custom, is checked against its JSON Schema as the type registry
 * lists it (schemaForm.ts). Errors are keyed by the API's field paths (`payload.to`,
 * `retryPolicy.maxDelayMs`, `dependsOn`), so the API's own 422 details land on the same fields.
 */
import type { JobCreate, RetryPolicyIn, RetryStrategy } from '../api/types';
import type { SchemaFormPlan } from './schemaFields';
import { buildSchemaPayload, initialSchemaState, type SchemaPayloadState } from './schemaForm';

export type FieldErrors = Record<string, string>;

export const MAX_TIMEOUT_SECONDS = 1_700;
export const MAX_DELAY_SECONDS = 31_536_000;
export const MAX_RETRY_DELAY_MS = 86_400_000;
export const MAX_DEPENDENCIES = 100;
export const POLICY_NAME_PATTERN = /^[a-z0-9][a-z0-9_-]{0,63}$/;
const UUID_PATTERN = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;
const EMAIL_PATTERN = /^[^\s@]+@[^\s@]+\.[^\s@]+$/;

export type RetryMode = 'default' | 'named' | 'inline';

export interface RetryValues {
  mode: RetryMode;
  name: string;
  strategy: '' | RetryStrategy;
  baseDelayMs: string;
  multiplier: string;
  maxDelayMs: string;
  jitter: '' | 'true' | 'false';
}

export interface JobFormValues extends TypedPayloadValues {
  priority: string;
  when: 'now' | 'delay' | 'runAt';
  delaySeconds: string;
  runAt: string;
  maxAttempts: string;
  timeoutSeconds: string;
  retry: RetryValues;
  dependsOn: string;
  submittedBy: string;
}

export function emptyRetry(): RetryValues {
  return {
    mode: 'default',
    name: '',
    strategy: '',
    baseDelayMs: '',
    multiplier: '',
    maxDelayMs: '',
    jitter: '',
  };
}

export function emptyJobForm(): JobFormValues {
  return {
    type: '',
    priority: '2',
    payloads: {},
    when: 'now',
    delaySeconds: '',
    runAt: '',
    maxAttempts: '',
    timeoutSeconds: '',
    retry: emptyRetry(),
    dependsOn: '',
    submittedBy: '',
  };
}

// ---- number helpers ----

type NumberResult = { value: number } | { error: string } | null;
interface NumberRule {
  min: number;
  max: number;
  integer: boolean;
  label?: string;
}

/** The bounds of a job's numbers, as the submission service checks them. */
const PRIORITY_RULE: NumberRule = { min: 1, max: 3, integer: true, label: 'Priority' };
const DELAY_RULE: NumberRule = { min: 0, max: MAX_DELAY_SECONDS, integer: true, label: 'Delay' };
const MAX_ATTEMPTS_RULE: NumberRule = { min: 1, max: 20, integer: true, label: 'Max attempts' };
const TIMEOUT_RULE: NumberRule = { min: 1, max: MAX_TIMEOUT_SECONDS, integer: true, label: 'Timeout' };

function parseNumber(raw: string, { min, max, integer, label }: NumberRule): NumberResult {
  const text = raw.trim();
  if (text === '') return null;
  if (!/^-?\d+(\.\d+)?$/.test(text)) return { error: 'Enter a number' };
  const value = Number(text);
  if (integer && !Number.isInteger(value)) return { error: 'Enter a whole number' };
  if (value < min || value > max) {
    return { error: `${label ?? 'Value'} must be between ${min} and ${max}` };
  }
  return { value };
}

function optionalNumber(raw: string, errors: FieldErrors, field: string, rule: NumberRule): number | undefined {
  const result = parseNumber(raw, rule);
  if (result === null) return undefined;
  if ('error' in result) {
    errors[field] = result.error;
    return undefined;
  }
  return result.value;
}

function requireNumber(raw: string, errors: FieldErrors, field: string, rule: NumberRule): number | undefined {
  if (raw.trim() === '') {
    errors[field] = 'Required';
    return undefined;
  }
  return optionalNumber(raw, errors, field, rule);
}

export function isEmail(value: string): boolean {
  return EMAIL_PATTERN.test(value.trim());
}

export function isUuid(value: string): boolean {
  return UUID_PATTERN.test(value.trim());
}

// ---- retry policy ----

export function validateRetry(
  values: RetryValues,
  errors: FieldErrors,
  prefix = 'retryPolicy',
): RetryPolicyIn | string | undefined {
  if (values.mode === 'default') return undefined;
  if (values.mode === 'named') {
    if (!values.name) errors[prefix] = 'Choose a policy';
    else if (!POLICY_NAME_PATTERN.test(values.name)) {
      errors[prefix] = 'A policy name is 1-64 of a-z, 0-9, - and _';
    }
    return values.name;
  }
  const delay = { min: 0, max: MAX_RETRY_DELAY_MS, integer: true };
  const policy: RetryPolicyIn = {};
  if (values.strategy) policy.strategy = values.strategy;
  const base = optionalNumber(values.baseDelayMs, errors, `${prefix}.baseDelayMs`, delay);
  const maxDelay = optionalNumber(values.maxDelayMs, errors, `${prefix}.maxDelayMs`, delay);
  const multiplier = optionalNumber(values.multiplier, errors, `${prefix}.multiplier`, {
    min: 1,
    max: 100,
    integer: false,
  });
  if (base !== undefined) policy.baseDelayMs = base;
  if (maxDelay !== undefined) policy.maxDelayMs = maxDelay;
  if (multiplier !== undefined) policy.multiplier = multiplier;
  if (values.jitter) policy.jitter = values.jitter === 'true';
  if (base !== undefined && maxDelay !== undefined && maxDelay < base) {
    errors[`${prefix}.maxDelayMs`] = 'Max delay must be at least the base delay';
  }
  return policy;
}

// ---- dependencies ----

export function parseIdList(text: string): string[] {
  return text
    .split(/[\s,;]+/)
    .map((part) => part.trim())
    .filter(Boolean);
}

function validateDependsOn(text: string, errors: FieldErrors): string[] | undefined {
  const ids = parseIdList(text);
  if (ids.length === 0) return undefined;
  const problems: string[] = [];
  const bad = ids.filter((id) => !isUuid(id));
  if (bad.length > 0) problems.push(`not a job id: ${bad.slice(0, 3).join(', ')}`);
  if (new Set(ids.map((id) => id.toLowerCase())).size !== ids.length) {
    problems.push('each job id only once');
  }
  if (ids.length > MAX_DEPENDENCIES) problems.push(`at most ${MAX_DEPENDENCIES} job ids`);
  if (problems.length > 0) errors.dependsOn = `Check the list: ${problems.join('; ')}`;
  return ids.map((id) => id.toLowerCase());
}

// ---- the whole form ----

export interface ValidationResult {
  errors: FieldErrors;
  body: JobCreate | null;
}

/** What a form holds of a job's type and payload (the submit and the schedule form). */
export interface TypedPayloadValues {
  /** The job type as the registry lists it ('' until one is chosen or the list has loaded). */
  type: string;
  /** The payload inputs of each type chosen so far (schemaForm.ts). */
  payloads: Record<string, SchemaPayloadState>;
}

/** The payload inputs of the type `values.type` (its schema's defaults until edited). */
export function payloadState(values: Pick<TypedPayloadValues, 'type' | 'payloads'>, plan: SchemaFormPlan): SchemaPayloadState {
  return values.payloads[values.type] ?? initialSchemaState(plan);
}

/**
 * Check and build the payload of `values.type`, errors under `prefix`, from `plan`, the form of
 * the type's schema (`planSchemaForm`); without a plan the type is not listed (an error on
 * `typeField`).
 */
export function validateTypedPayload(
  values: TypedPayloadValues,
  plan: SchemaFormPlan | undefined,
  errors: FieldErrors,
  { prefix = 'payload', typeField = 'type' }: { prefix?: string; typeField?: string } = {},
): Record<string, unknown> {
  if (plan) return buildSchemaPayload(plan, payloadState(values, plan), errors, prefix);
  errors[typeField] = values.type ? 'Unknown job type: choose one from the list' : 'Choose a job type';
  return {};
}

/**
 * Check the whole form and build the request body. The payload is checked against `plan`, the
 * form of the type's schema (`planSchemaForm`); without one the type is unknown here.
 */
export function validateJobForm(
  values: JobFormValues,
  now: Date = new Date(),
  plan?: SchemaFormPlan,
): ValidationResult {
  const errors: FieldErrors = {};
  const priority = requireNumber(values.priority, errors, 'priority', PRIORITY_RULE);
  const payload = validateTypedPayload(values, plan, errors);
  const body: JobCreate = { type: values.type, priority: priority ?? 0, payload };

  if (values.when === 'delay') {
    const delay = requireNumber(values.delaySeconds, errors, 'delaySeconds', DELAY_RULE);
    if (delay !== undefined) body.delaySeconds = delay;
  } else if (values.when === 'runAt') {
    if (!values.runAt) {
      errors.runAt = 'Required';
    } else {
      const at = new Date(values.runAt);
      if (Number.isNaN(at.getTime())) errors.runAt = 'Enter a date and time';
      else if (at.getTime() - now.getTime() > MAX_DELAY_SECONDS * 1_000) {
        errors.runAt = 'At most 1 year ahead';
      } else body.runAt = at.toISOString();
    }
  }

  const attempts = optionalNumber(values.maxAttempts, errors, 'maxAttempts', MAX_ATTEMPTS_RULE);
  if (attempts !== undefined) body.maxAttempts = attempts;
  const timeout = optionalNumber(values.timeoutSeconds, errors, 'timeoutSeconds', TIMEOUT_RULE);
  if (timeout !== undefined) body.timeoutSeconds = timeout;

  const retry = validateRetry(values.retry, errors);
  if (retry !== undefined) body.retryPolicy = retry;

  const dependsOn = validateDependsOn(values.dependsOn, errors);
  if (dependsOn) body.dependsOn = dependsOn;

  if (values.submittedBy.trim()) {
    if (!isEmail(values.submittedBy)) errors.submittedBy = 'Enter a valid email address';
    else body.submittedBy = values.submittedBy.trim();
  }

  return { errors, body: Object.keys(errors).length === 0 ? body : null };
}

/**
 * Fold API error details onto the form's fields: `dependsOn.3` goes to `dependsOn`,
 * `retryPolicy.object.x` style paths are already flattened by the API. Unknown fields are kept
 * under their own path and shown in the error summary.
 */
export function apiFieldErrors(
  details: readonly { field: string; message: string }[],
  dependsOn: readonly string[] = [],
): FieldErrors {
  const errors: FieldErrors = {};
  const dependencyProblems: string[] = [];
  for (const { field, message } of details) {
    const dep = /^dependsOn\.(\d+)$/.exec(field);
    if (dep) {
      const index = Number(dep[1]);
      const id = dependsOn[index];
      dependencyProblems.push(`${id ? id.slice(0, 8) : `entry ${index + 1}`}: ${message}`);
      continue;
    }
    errors[field] = errors[field] ? `${errors[field]}; ${message}` : message;
  }
  if (dependencyProblems.length > 0) {
    errors.dependsOn = dependencyProblems.join('; ');
  }
  return errors;
}
