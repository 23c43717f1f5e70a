import { isBuiltinType, JOB_TYPES, type JobType } from '../api/types';
import type { SchemaFormPlan } from './schemaFields';

export const TYPE_LABELS: Record<JobType, string> = {
  email: 'Email',
  image_resize: 'Image resize',
  report_generation: 'Report',
  simulate: 'Simulate (demo)',
};

/** A built-in type's label; a custom type is shown by its name (`acme.reverse`). */
export function typeLabel(type: string): string {
  return isBuiltinType(type) ? TYPE_LABELS[type] : type;
}

/**
 * The types a type filter offers: the built-ins in their fixed order, then the custom types of
 * `listed` (GET /api/job-types) sorted by name; without a list (loading, failed) the built-ins
 * alone. `current`, the filter's value, is kept as the last option when no list has it (a URL
 * naming a type not, or not yet, listed).
 */
export function typeFilterOptions(listed: readonly { type: string }[] | undefined, current = ''): string[] {
  const custom = [...new Set((listed ?? []).map((t) => t.type).filter((type) => !isBuiltinType(type)))].sort((a, b) =>
    a < b ? -1 : a > b ? 1 : 0,
  );
  const options: string[] = [...JOB_TYPES, ...custom];
  if (current && !options.includes(current)) options.push(current);
  return options;
}

export const PAYLOAD_LABELS: Record<string, string> = {
  to: 'To',
  subject: 'Subject',
  body: 'Body',
  imageBase64: 'Image',
  width: 'Width',
  height: 'Height',
  format: 'Format',
  from: 'From date',
  reportType: 'Report type',
  immediateFailureRate: 'Immediate failure rate',
  failureRate: 'Failure rate',
  minSeconds: 'Min seconds',
  maxSeconds: 'Max seconds',
  seed: 'Seed',
};

/** The payload inputs of each built-in type (PayloadFields). */
const PAYLOAD_FIELDS: Record<JobType, string[]> = {
  email: ['to', 'subject', 'body'],
  image_resize: ['imageBase64', 'width', 'height', 'format'],
  report_generation: ['from', 'to', 'format'],
  simulate: ['immediateFailureRate', 'failureRate', 'minSeconds', 'maxSeconds', 'seed'],
};

/**
 * The labels of the payload inputs a form shows for `type`, keyed by their API path
 * (`${prefix}.<name>`): a built-in's hand-written fields, a custom type's schema-built fields
 * (`plan`; none in raw JSON, where the text area is `prefix` itself).
 */
export function payloadFieldLabels(
  type: string,
  plan: SchemaFormPlan | null,
  rawMode: boolean,
  prefix = 'payload',
): Record<string, string> {
  const labels: Record<string, string> = {};
  if (isBuiltinType(type)) {
    for (const name of PAYLOAD_FIELDS[type]) {
      labels[`${prefix}.${name}`] = type === 'report_generation' && name === 'to' ? 'To date' : PAYLOAD_LABELS[name] ?? name;
    }
  } else if (plan?.kind === 'form' && !rawMode) {
    for (const field of plan.fields) labels[`${prefix}.${field.name}`] = field.label;
  }
  return labels;
}
