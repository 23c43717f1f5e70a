/**
 * Batches submitted from this browser. The API has no "list my batches" call (only
 * GET /api/batches/{id}), so the Batches page remembers the ids it has seen.
 */
export interface RecentBatch {
  batchId: string;
  name: string | null;
  size: number;
  submittedAt: string;
}

const KEY = 'jobs.recentBatches';
const LIMIT = 50;

function key(owner: string): string {
  return `${KEY}:${owner}`;
}

export function loadRecentBatches(owner: string): RecentBatch[] {
  try {
    const raw = localStorage.getItem(key(owner));
    const value = raw ? (JSON.parse(raw) as unknown) : [];
    return Array.isArray(value) ? (value as RecentBatch[]) : [];
  } catch {
    return [];
  }
}

export function rememberBatch(owner: string, batch: RecentBatch): void {
  const list = [batch, ...loadRecentBatches(owner).filter((b) => b.batchId !== batch.batchId)];
  try {
    localStorage.setItem(key(owner), JSON.stringify(list.slice(0, LIMIT)));
  } catch {
    /* storage unavailable: the batch is simply not remembered */
  }
}

export function forgetBatch(owner: string, batchId: string): void {
  const list = loadRecentBatches(owner).filter((b) => b.batchId !== batchId);
  try {
    localStorage.setItem(key(owner), JSON.stringify(list));
  } catch {
    /* ignore */
  }
}
