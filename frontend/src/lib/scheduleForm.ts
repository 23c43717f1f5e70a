/**
 * The create-schedule form: values, validation (the dashboard's rules) and the request body.
 * The job template's payload is checked against its type's schema, as on the submit form
 * (`validateTypedPayload`).
 */
import type { JobTemplate, ScheduleCreate } from '../api/types';
import { cronError, isValidTimeZone, normalizeCron } from './cron';
import {
  emptyRetry,
  MAX_TIMEOUT_SECONDS,
  validateRetry,
  validateTypedPayload,
  type FieldErrors,
  type RetryValues,
  type TypedPayloadValues,
} from './jobForm';
import type { SchemaFormPlan } from './schemaFields';

export interface ScheduleFormValues extends TypedPayloadValues {
  name: string;
  cron: string;
  timezone: string;
  priority: string;
  maxAttempts: string;
  timeoutSeconds: string;
  retry: RetryValues;
}

export function emptyScheduleForm(timezone: string): ScheduleFormValues {
  return {
    name: '',
    cron: '*/5 * * * *',
    timezone,
    type: '',
    priority: '1',
    payloads: {},
    maxAttempts: '',
    timeoutSeconds: '',
    retry: emptyRetry(),
  };
}

function intIn(raw: string, min: number, max: number): number | null | 'bad' {
  const text = raw.trim();
  if (!text) return null;
  if (!/^\d+$/.test(text)) return 'bad';
  const value = Number(text);
  return value < min || value > max ? 'bad' : value;
}

/** Check the form and build the body; `plan` is the form of the type's payload schema
 * (`planSchemaForm`), without one the type is unknown here. */
export function validateScheduleForm(
  values: ScheduleFormValues,
  plan?: SchemaFormPlan,
): {
  errors: FieldErrors;
  body: ScheduleCreate | null;
} {
  const errors: FieldErrors = {};
  const name = values.name.trim();
  if (!name) errors.name = 'Required';
  else if (name.length > 200) errors.name = 'At most 200 characters';
  const cronProblem = cronError(values.cron);
  if (cronProblem) errors.cron = cronProblem;
  if (!isValidTimeZone(values.timezone)) errors.timezone = 'Choose an IANA time zone, e.g. Europe/Berlin';

  const template: JobTemplate = {
    type: values.type,
    priority: Number(values.priority),
    payload: validateTypedPayload(values, plan, errors, { prefix: 'jobTemplate.payload', typeField: 'jobTemplate.type' }),
  };
  if (![1, 2, 3].includes(template.priority)) errors['jobTemplate.priority'] = 'Choose a priority';
  const attempts = intIn(values.maxAttempts, 1, 20);
  if (attempts === 'bad') errors['jobTemplate.maxAttempts'] = 'A whole number from 1 to 20';
  else if (attempts !== null) template.maxAttempts = attempts;
  const timeout = intIn(values.timeoutSeconds, 1, MAX_TIMEOUT_SECONDS);
  if (timeout === 'bad') errors['jobTemplate.timeoutSeconds'] = `A whole number from 1 to ${MAX_TIMEOUT_SECONDS}`;
  else if (timeout !== null) template.timeoutSeconds = timeout;
  const retry = validateRetry(values.retry, errors, 'jobTemplate.retryPolicy');
  if (typeof retry === 'string') template.retryPolicyName = retry;
  else if (retry) template.retryPolicy = retry;

  if (Object.keys(errors).length > 0) return { errors, body: null };
  return {
    errors,
    body: { name, cron: normalizeCron(values.cron), timezone: values.timezone, jobTemplate: template },
  };
}

/** API paths that the form shows under another name. */
export function scheduleApiErrors(details: readonly { field: string; message: string }[]): FieldErrors {
  const errors: FieldErrors = {};
  for (const { field, message } of details) {
    const key = field === 'jobTemplate.retryPolicyName' ? 'jobTemplate.retryPolicy' : field;
    errors[key] = errors[key] ? `${errors[key]}; ${message}` : message;
  }
  return errors;
}
