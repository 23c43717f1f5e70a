/**
 * A project's weight in fair dispatch and its quotas in the console (docs/frontend.md, "Queues
 * page"; docs/flow-control.md, "Project weights" and "Quotas"): how they read, and the form
 * that changes them.
 *
 * The form holds text. The weight is required (1..100); an empty quota is "no quota", sent as
 * `null`, which clears it. A change sends only the fields that differ from the settings as the
 * form opened on them (PUT changes the fields given and leaves the others), so a field another
 * admin changed meanwhile is not put back. The checks follow the API's
 * (`libs/common/src/jobs_common/project_flow.py`); its 422 details land on the same paths.
 */
import type { ProjectFlowChange, ProjectFlowView } from '../api/types';
import { formatDateTime, formatNumber } from './format';

export const MIN_WEIGHT = 1;
export const MAX_WEIGHT = 100;
/** The quota columns are PostgreSQL integers. */
export const MAX_QUOTA = 2 ** 31 - 1;

/** The form's controls by field path: the API's (its 422 details name the same). */
export const PROJECT_FLOW_FIELD_PATHS = ['weight', 'maxWaiting', 'maxSubmittedPerDay', 'maxRunning'] as const;
export type ProjectFlowField = (typeof PROJECT_FLOW_FIELD_PATHS)[number];

export const PROJECT_FLOW_LABELS: Record<ProjectFlowField, string> = {
  weight: 'Weight',
  maxWaiting: 'Max waiting jobs',
  maxSubmittedPerDay: 'Max submitted per day',
  maxRunning: 'Max running jobs',
};

/** A quota as it reads: "1,000", or "none". */
export function formatQuota(quota: number | null): string {
  return quota === null ? 'none' : formatNumber(quota);
}

/** Who changed the settings last and when: "by a@x.com, 2 Jan 2030, 10:00", or "never (…)". */
export function lastChanged(view: ProjectFlowView): string {
  const parts = [view.updatedBy ? `by ${view.updatedBy}` : null, view.updatedAt ? formatDateTime(view.updatedAt) : null];
  const said = parts.filter((part) => part !== null);
  return said.length > 0 ? said.join(', ') : 'never (weight 1 and no quota until an admin sets them)';
}

export type ProjectFlowValues = Record<ProjectFlowField, string>;

const text = (value: number | null) => (value === null ? '' : String(value));

/** The form holding `view`'s settings. */
export function projectFlowValues(view: ProjectFlowView): ProjectFlowValues {
  return {
    weight: String(view.weight),
    maxWaiting: text(view.maxWaiting),
    maxSubmittedPerDay: text(view.maxSubmittedPerDay),
    maxRunning: text(view.maxRunning),
  };
}

export interface ProjectFlowSettings {
  weight: number;
  maxWaiting: number | null;
  maxSubmittedPerDay: number | null;
  maxRunning: number | null;
}

const between = (min: number, max: number) => `A whole number, ${min} to ${max.toLocaleString('en')}`;

/** A whole number in `min..max` from `raw` (null when empty), or the reason it is not one. */
function wholeNumber(raw: string, min: number, max: number): { value: number | null } | { error: string } {
  const value = raw.trim();
  if (value === '') return { value: null };
  if (!/^\d+$/.test(value)) return { error: between(min, max) };
  const n = Number.parseInt(value, 10);
  if (n < min || n > max) return { error: between(min, max) };
  return { value: n };
}

/** The settings the form holds, or its errors by field path (under `prefix`). */
export function validateProjectFlow(
  values: ProjectFlowValues,
  prefix: string,
): { errors: Record<string, string>; settings: ProjectFlowSettings | null } {
  const errors: Record<string, string> = {};
  const read = (field: ProjectFlowField, min: number, max: number): number | null => {
    const result = wholeNumber(values[field], min, max);
    if ('error' in result) {
      errors[`${prefix}.${field}`] = result.error;
      return null;
    }
    return result.value;
  };
  // the weight cannot be null: a project always has one
  const weight = values.weight.trim() === '' ? null : read('weight', MIN_WEIGHT, MAX_WEIGHT);
  if (values.weight.trim() === '') errors[`${prefix}.weight`] = `Required: ${between(MIN_WEIGHT, MAX_WEIGHT).toLowerCase()}`;
  const maxWaiting = read('maxWaiting', 1, MAX_QUOTA);
  const maxSubmittedPerDay = read('maxSubmittedPerDay', 1, MAX_QUOTA);
  const maxRunning = read('maxRunning', 1, MAX_QUOTA);
  if (weight === null || Object.keys(errors).length > 0) return { errors, settings: null };
  return { errors, settings: { weight, maxWaiting, maxSubmittedPerDay, maxRunning } };
}

/** The PUT's body: only the settings that differ from `before`, a cleared quota as null. */
export function projectFlowChange(before: ProjectFlowView, settings: ProjectFlowSettings): ProjectFlowChange {
  const body: ProjectFlowChange = {};
  if (settings.weight !== before.weight) body.weight = settings.weight;
  if (settings.maxWaiting !== before.maxWaiting) body.maxWaiting = settings.maxWaiting;
  if (settings.maxSubmittedPerDay !== before.maxSubmittedPerDay) body.maxSubmittedPerDay = settings.maxSubmittedPerDay;
  if (settings.maxRunning !== before.maxRunning) body.maxRunning = settings.maxRunning;
  return body;
}
