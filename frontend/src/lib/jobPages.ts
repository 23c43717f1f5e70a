/**
 * Paging the jobs list. `GET /api/jobs` reads a page two ways: by its number (an offset, which
 * reaches only the first MAX_OFFSET_ROWS jobs of a listing; past them the API answers 422 on
 * `pageNumber`) or by the previous page's `nextCursor` (keyset, at any depth). Next follows
 * `nextCursor`; the URL keeps the page's number and the cursor it was reached by
 * (`?page=600&cursor=...`), so a reload and back/forward read the same page. The cursors of
 * the pages visited are kept in this tab's sessionStorage, one listing at a time, so Previous
 * steps back by keyset too, also after a reload or a visit to a job's page. A page whose
 * cursor is not known is read by its number when an offset reaches it, and not offered when
 * none does.
 */
import type { JobsPage } from '../api/types';
import { filtersToSearch, type JobFilters } from './jobFilters';

/** How many jobs into a listing `pageNumber` reaches (the dashboard's MAX_OFFSET_ROWS). */
export const MAX_OFFSET_ROWS = 10_000;

/** Whether `pageNumber` may name this page: its offset is within the first MAX_OFFSET_ROWS jobs. */
export function offsetReaches(page: number, pageSize: number): boolean {
  return page >= 1 && (page - 1) * pageSize < MAX_OFFSET_ROWS;
}

/** Where a page link goes: the page's number and the cursor to read it by ('' for its number). */
export interface PageTarget {
  page: number;
  cursor: string;
}

const STORAGE_KEY = 'jobs.pageCursors';
/** Cursors kept per listing; past this, the ones of pages farthest from the newest go. */
const MAX_REMEMBERED = 500;

interface Trail {
  listing: string;
  cursors: Record<string, string>;
}

/** The listing a cursor belongs to: its filters, order and page size (not the page). */
export function listingOf(filters: JobFilters): string {
  return filtersToSearch({ ...filters, page: 1, cursor: '' }).toString();
}

function storage(): Storage | null {
  return typeof sessionStorage === 'undefined' ? null : sessionStorage;
}

function readTrail(listing: string): Trail {
  try {
    const raw: unknown = JSON.parse(storage()?.getItem(STORAGE_KEY) ?? 'null');
    if (typeof raw === 'object' && raw !== null && 'listing' in raw && 'cursors' in raw) {
      const trail = raw as Trail;
      if (trail.listing === listing && typeof trail.cursors === 'object') return trail;
    }
  } catch {
    /* unreadable: no cursor known */
  }
  return { listing, cursors: {} };
}

/** Remember by which cursor each page of `listing` is read (another listing's are forgotten). */
export function rememberCursors(listing: string, entries: readonly PageTarget[]): void {
  const store = storage();
  const known = entries.filter((entry) => entry.cursor !== '');
  if (!store || known.length === 0) return;
  const trail = readTrail(listing);
  if (known.every((entry) => trail.cursors[entry.page] === entry.cursor)) return;
  for (const entry of known) trail.cursors[entry.page] = entry.cursor;
  const newest = known[known.length - 1]?.page ?? 1;
  const kept = Object.entries(trail.cursors)
    .sort(([a], [b]) => Math.abs(Number(a) - newest) - Math.abs(Number(b) - newest))
    .slice(0, MAX_REMEMBERED);
  try {
    store.setItem(STORAGE_KEY, JSON.stringify({ listing, cursors: Object.fromEntries(kept) }));
  } catch {
    /* storage full or disabled: Previous falls back to page numbers */
  }
}

/**
 * How to read page `page` of `listing` from the answer on screen (`shown`), or null when
 * nothing can: the next page by the answer's `nextCursor` (none on the last page), page 1 and
 * other pages by a remembered cursor, else by their number while an offset reaches them.
 */
export function pageTarget(listing: string, shown: JobsPage, page: number): PageTarget | null {
  if (page < 1 || page > Math.max(shown.totalPages, 1)) return null;
  if (page === 1) return { page, cursor: '' };
  // an API without cursors (no nextCursor at all) pages by number only
  if (page === shown.pageNumber + 1 && shown.nextCursor !== undefined) {
    return shown.nextCursor ? { page, cursor: shown.nextCursor } : null;
  }
  const remembered: unknown = readTrail(listing).cursors[page];
  if (typeof remembered === 'string' && remembered) return { page, cursor: remembered };
  return offsetReaches(page, shown.pageSize) ? { page, cursor: '' } : null;
}
