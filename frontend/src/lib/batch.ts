/** Reading a batch from pasted JSON or CSV into the body of POST /api/batches. */
import type { BatchCreate, BatchJobSpec } from '../api/types';
import { isObject, parseJson } from './json';

export const MAX_BATCH_SIZE = 10_000;

export type BatchParse = { ok: true; batch: BatchCreate } | { ok: false; error: string };

function checkSpecs(jobs: unknown[]): string | null {
  if (jobs.length === 0) return 'The batch has no jobs.';
  if (jobs.length > MAX_BATCH_SIZE) return `At most ${MAX_BATCH_SIZE} jobs per batch (got ${jobs.length}).`;
  const bad = jobs.findIndex((job) => !isObject(job));
  if (bad >= 0) return `Job ${bad + 1} is not a JSON object.`;
  return null;
}

/** `[spec, ...]` or `{"name"?, "submittedBy"?, "jobs": [spec, ...]}`. */
export function parseBatchJson(text: string, name?: string): BatchParse {
  const parsed = parseJson(text);
  if (!parsed.ok) return parsed;
  const value = parsed.value;
  let batch: BatchCreate;
  if (Array.isArray(value)) {
    batch = { jobs: value as BatchJobSpec[] };
  } else if (isObject(value) && Array.isArray(value.jobs)) {
    batch = { ...(value as unknown as BatchCreate) };
  } else {
    return { ok: false, error: 'Expected a JSON list of job specs, or an object with a "jobs" list.' };
  }
  const problem = checkSpecs(batch.jobs);
  if (problem) return { ok: false, error: problem };
  if (name?.trim()) batch.name = name.trim();
  return { ok: true, batch };
}

/** RFC 4180 CSV: quoted fields, "" inside quotes, commas and line breaks inside quotes. */
export function parseCsv(text: string): string[][] {
  const rows: string[][] = [];
  let row: string[] = [];
  let field = '';
  let quoted = false;
  for (let i = 0; i < text.length; i++) {
    const char = text.charAt(i);
    if (quoted) {
      if (char === '"') {
        if (text[i + 1] === '"') {
          field += '"';
          i++;
        } else {
          quoted = false;
        }
      } else {
        field += char;
      }
    } else if (char === '"') {
      quoted = true;
    } else if (char === ',') {
      row.push(field);
      field = '';
    } else if (char === '\n' || char === '\r') {
      if (char === '\r' && text[i + 1] === '\n') i++;
      row.push(field);
      rows.push(row);
      row = [];
      field = '';
    } else {
      field += char;
    }
  }
  if (field !== '' || row.length > 0) {
    row.push(field);
    rows.push(row);
  }
  return rows.filter((r) => r.some((cell) => cell.trim() !== ''));
}

const INT_COLUMNS = new Set(['priority', 'delaySeconds', 'maxAttempts', 'timeoutSeconds']);
const TEXT_COLUMNS = new Set(['type', 'ref', 'runAt', 'retryPolicy', 'submittedBy']);

function literal(cell: string): unknown {
  const text = cell.trim();
  if (/^-?\d+(\.\d+)?$/.test(text)) return Number(text);
  if (text === 'true') return true;
  if (text === 'false') return false;
  if (text === 'null') return null;
  return cell;
}

/**
 * A header row, then one job per row. Columns: `type`, `priority`, `payload` (a JSON object)
 * and/or `payload.<field>` columns (numbers, true/false/null are read as such), `ref`,
 * `dependsOn` (ids or ref:label separated by `;` or spaces), `delaySeconds`, `runAt`,
 * `maxAttempts`, `timeoutSeconds`, `retryPolicy` (a stored policy's name), `submittedBy`.
 */
export function parseBatchCsv(text: string, name?: string): BatchParse {
  const rows = parseCsv(text);
  const header = rows[0]?.map((cell) => cell.trim());
  if (!header || rows.length < 2) return { ok: false, error: 'Expected a header row and at least one job row.' };
  if (!header.includes('type')) return { ok: false, error: 'The header needs a "type" column.' };
  const unknown = header.filter(
    (column) =>
      !INT_COLUMNS.has(column) &&
      !TEXT_COLUMNS.has(column) &&
      column !== 'payload' &&
      column !== 'dependsOn' &&
      !column.startsWith('payload.'),
  );
  if (unknown.length > 0) return { ok: false, error: `Unknown column(s): ${unknown.join(', ')}` };
  const jobs: BatchJobSpec[] = [];
  for (let r = 1; r < rows.length; r++) {
    const cells = rows[r] ?? [];
    const spec: Record<string, unknown> = {};
    let payload: Record<string, unknown> = {};
    for (let c = 0; c < header.length; c++) {
      const column = header[c] ?? '';
      const cell = cells[c] ?? '';
      if (cell.trim() === '') continue;
      if (column === 'payload') {
        try {
          const parsed = JSON.parse(cell) as unknown;
          if (!isObject(parsed)) return { ok: false, error: `Row ${r + 1}: payload must be a JSON object.` };
          payload = { ...parsed, ...payload };
        } catch {
          return { ok: false, error: `Row ${r + 1}: payload is not valid JSON.` };
        }
      } else if (column.startsWith('payload.')) {
        payload[column.slice('payload.'.length)] = literal(cell);
      } else if (column === 'dependsOn') {
        spec.dependsOn = cell.split(/[;\s]+/).filter(Boolean);
      } else if (INT_COLUMNS.has(column)) {
        const value = Number(cell.trim());
        if (!Number.isInteger(value)) return { ok: false, error: `Row ${r + 1}: ${column} must be a whole number.` };
        spec[column] = value;
      } else {
        spec[column] = cell.trim();
      }
    }
    spec.payload = payload;
    jobs.push(spec as unknown as BatchJobSpec);
  }
  const problem = checkSpecs(jobs);
  if (problem) return { ok: false, error: problem };
  const batch: BatchCreate = { jobs };
  if (name?.trim()) batch.name = name.trim();
  return { ok: true, batch };
}
