import { isBuiltinType, type JobType } from '../api/types';

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
