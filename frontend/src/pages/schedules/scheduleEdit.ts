/**
 * Editing a schedule: the form's values from the stored job template (camelCase, as the
 * scheduler keeps it: docs/dashboard.md "Schedules"), and the body of `PUT
 * /api/schedules/{id}` from the checked form. The payload starts as the stored JSON; the form
 * shows it in its fields once the type's schema is known (`switchRawMode`).
 */
import type { RetryStrategy, ScheduleCreate, ScheduleEdit, ScheduleView } from '../../api/types';
import { prettyJson } from '../../lib/format';
import { emptyRetry, type RetryValues } from '../../lib/jobForm';
import { isObject } from '../../lib/json';
import type { ScheduleFormValues } from '../../lib/scheduleForm';

const STRATEGIES: readonly string[] = ['fixed', 'linear', 'exponential'];

function text(value: unknown): string {
  return typeof value === 'number' || typeof value === 'string' ? String(value) : '';
}

function retryValues(policy: unknown, name: unknown): RetryValues {
  if (typeof name === 'string' && name) return { ...emptyRetry(), mode: 'named', name };
  if (!isObject(policy)) return emptyRetry();
  const strategy = typeof policy.strategy === 'string' && STRATEGIES.includes(policy.strategy) ? (policy.strategy as RetryStrategy) : '';
  return {
    mode: 'inline',
    name: '',
    strategy,
    baseDelayMs: text(policy.baseDelayMs),
    multiplier: text(policy.multiplier),
    maxDelayMs: text(policy.maxDelayMs),
    jitter: typeof policy.jitter === 'boolean' ? (String(policy.jitter) as 'true' | 'false') : '',
  };
}

/** The form as the schedule stands. */
export function formFromSchedule(schedule: ScheduleView): ScheduleFormValues {
  const template = schedule.jobTemplate;
  const type = typeof template.type === 'string' ? template.type : '';
  const payload = isObject(template.payload) ? template.payload : {};
  return {
    name: schedule.name,
    cron: schedule.cron,
    timezone: schedule.timezone,
    type,
    priority: text(template.priority) || '2',
    payloads: { [type]: { values: {}, raw: prettyJson(payload), rawMode: true } },
    maxAttempts: text(template.maxAttempts),
    timeoutSeconds: text(template.timeoutSeconds),
    retry: retryValues(template.retryPolicy, template.retryPolicyName),
  };
}

/** The edit's body: the checked create body without the name (a schedule keeps its name). */
export function editBody(body: ScheduleCreate): ScheduleEdit {
  return { cron: body.cron, timezone: body.timezone, jobTemplate: body.jobTemplate };
}
