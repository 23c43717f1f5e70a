/**
 * The batch form's examples, written for a type the registry lists (the forms' default type,
 * `defaultJobType`) with the payload its schema's defaults make, so an example inserted can be
 * sent as it is: two jobs, the second depending on the first by its `ref`.
 */
import type { JsonObject } from './json';

function csvCell(text: string): string {
  return /[",\r\n]/.test(text) ? `"${text.replaceAll('"', '""')}"` : text;
}

/** A `payload.<field>` cell reads back as the same value (batch.ts `literal`)? */
function fitsColumn(value: unknown): boolean {
  if (value === null || typeof value === 'number' || typeof value === 'boolean') return true;
  return typeof value === 'string' && !/^(-?\d+(\.\d+)?|true|false|null)$/.test(value.trim()) && value.trim() === value;
}

export function batchJsonExample(type: string, payload: JsonObject): string {
  const first = { ref: 'extract', type, priority: 2, payload };
  const second = { ref: 'load', type, priority: 2, payload, dependsOn: ['ref:extract'] };
  return `[\n  ${JSON.stringify(first)},\n  ${JSON.stringify(second)}\n]`;
}

/** Columns `payload.<field>` when every value fits one, else one `payload` column of JSON. */
export function batchCsvExample(type: string, payload: JsonObject): string {
  const entries = Object.entries(payload);
  const split = entries.every(([, value]) => fitsColumn(value));
  const header = ['type', 'priority', 'ref', 'dependsOn', ...(split ? entries.map(([key]) => `payload.${key}`) : ['payload'])];
  const cells = split ? entries.map(([, value]) => (typeof value === 'string' ? value : JSON.stringify(value))) : [JSON.stringify(payload)];
  const rows = [
    [type, '3', 'first', '', ...cells],
    [type, '1', '', 'ref:first', ...cells],
  ];
  return [header, ...rows].map((row) => row.map(csvCell).join(',')).join('\n');
}
