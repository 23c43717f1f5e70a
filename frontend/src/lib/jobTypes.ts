/**
 * The job types as the registry lists them (GET /api/job-types): nothing here knows a type by
 * its name. Built-in types (the `builtin` flag) come first where types are offered, then the
 * custom ones, each by name.
 */
import type { JobTypeInfo } from '../api/types';
import type { SchemaFormPlan } from './schemaFields';
import { buildSchemaPayload, initialSchemaState } from './schemaForm';

const byName = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

/** The listed types, built-ins first, then custom ones, each group by name. */
export function orderedTypes<T extends Pick<JobTypeInfo, 'type' | 'builtin'>>(listed: readonly T[]): T[] {
  return [...listed].sort((a, b) => Number(b.builtin) - Number(a.builtin) || byName(a.type, b.type));
}

/**
 * The types a type filter offers: the listed types (`orderedTypes`), none while the list loads
 * or when it failed. `current`, the filter's value, is kept as the last option when no list has
 * it (a URL naming a type not, or not yet, listed).
 */
export function typeFilterOptions(
  listed: readonly Pick<JobTypeInfo, 'type' | 'builtin'>[] | undefined,
  current = '',
): string[] {
  const options = [...new Set(orderedTypes(listed ?? []).map((t) => t.type))];
  if (current && !options.includes(current)) options.push(current);
  return options;
}

/** Can a payload of this form be sent as the schema's defaults fill it in? */
export function sendableAsIs(plan: SchemaFormPlan): boolean {
  if (plan.kind === 'raw') return false;
  const errors = {};
  buildSchemaPayload(plan, initialSchemaState(plan), errors);
  return Object.keys(errors).length === 0;
}

/**
 * The type a form that makes jobs starts on: the first type (`orderedTypes`) a live worker
 * serves whose payload the schema's defaults make whole, so the form can be sent as it opens;
 * else the first type a live worker serves; else the first listed; '' when none is listed.
 */
export function defaultJobType(
  listed: readonly JobTypeInfo[] | undefined,
  planOf: (info: JobTypeInfo) => SchemaFormPlan,
): string {
  const types = orderedTypes(listed ?? []);
  const served = types.filter((t) => t.liveWorkers > 0);
  return (served.find((t) => sendableAsIs(planOf(t))) ?? served[0] ?? types[0])?.type ?? '';
}

/**
 * The labels of the payload inputs a form shows, keyed by their API path (`${prefix}.<name>`):
 * the fields built from the type's schema (`plan`; none in raw JSON, where the text area is
 * `prefix` itself).
 */
export function payloadFieldLabels(plan: SchemaFormPlan | null, rawMode: boolean, prefix = 'payload'): Record<string, string> {
  const labels: Record<string, string> = {};
  if (plan?.kind === 'form' && !rawMode) {
    for (const field of plan.fields) labels[`${prefix}.${field.name}`] = field.label;
  }
  return labels;
}
