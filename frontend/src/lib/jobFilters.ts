/**
 * The jobs table's state lives in the URL query string (shareable views):
 * `?status=running,queued&type=email&priority=3&createdFrom=...&sortBy=priority&sortDirection=asc&page=2`,
 * and past the first pages the cursor the page was reached by (`&page=600&cursor=...`, see
 * `jobPages.ts`), and the search (`&search=payload.to%20%3D%20a%40b.c`, see
 * `pages/jobs/jobSearch.ts`). Values the API would refuse are dropped when reading, defaults
 * are left out when writing.
 */
import type { JobListParams } from '../api/endpoints';
import { JOB_STATUSES, type JobStatus } from '../api/types';

export const SORT_FIELDS = ['createdAt', 'updatedAt', 'priority', 'status', 'type'] as const;
export type SortField = (typeof SORT_FIELDS)[number];
export type SortDirection = 'asc' | 'desc';
export const PAGE_SIZES = [10, 20, 50, 100] as const;

export interface JobFilters {
  status: JobStatus[];
  type: string;
  priority: string;
  createdFrom: string;
  createdTo: string;
  submittedBy: string;
  scheduleId: string;
  batchId: string;
  /** A job id prefix or `payload.<field> = <value>` ('' for none). */
  search: string;
  sortBy: SortField;
  sortDirection: SortDirection;
  page: number;
  /** The previous page's `nextCursor` this page was reached by; '' for a page read by its number. */
  cursor: string;
  pageSize: number;
}

export const DEFAULT_FILTERS: JobFilters = {
  status: [],
  type: '',
  priority: '',
  createdFrom: '',
  createdTo: '',
  submittedBy: '',
  scheduleId: '',
  batchId: '',
  search: '',
  sortBy: 'createdAt',
  sortDirection: 'desc',
  page: 1,
  cursor: '',
  pageSize: 20,
};

/** The longest `cursor` the API accepts. */
const MAX_CURSOR_LENGTH = 2_000;
/** The longest `search` the API accepts. */
export const MAX_SEARCH_LENGTH = 1_000;

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

function validIso(value: string | null): string {
  if (!value) return '';
  return Number.isNaN(new Date(value).getTime()) ? '' : value;
}

export function filtersFromSearch(search: URLSearchParams): JobFilters {
  const statuses = search
    .getAll('status')
    .flatMap((value) => value.split(','))
    .map((value) => value.trim().toLowerCase())
    .filter((value): value is JobStatus => (JOB_STATUSES as readonly string[]).includes(value));
  const sortBy = search.get('sortBy');
  const direction = search.get('sortDirection');
  const priority = search.get('priority') ?? '';
  const page = Number(search.get('page') ?? '1');
  const cursor = (search.get('cursor') ?? '').trim();
  const text = (search.get('search') ?? '').trim();
  const pageSize = Number(search.get('pageSize') ?? String(DEFAULT_FILTERS.pageSize));
  const uuid = (name: string) => {
    const value = search.get(name) ?? '';
    return UUID.test(value) ? value : '';
  };
  return {
    status: [...new Set(statuses)],
    type: (search.get('type') ?? '').trim(),
    priority: ['1', '2', '3'].includes(priority) ? priority : '',
    createdFrom: validIso(search.get('createdFrom')),
    createdTo: validIso(search.get('createdTo')),
    submittedBy: (search.get('submittedBy') ?? '').trim(),
    scheduleId: uuid('scheduleId'),
    batchId: uuid('batchId'),
    search: text.length <= MAX_SEARCH_LENGTH ? text : '',
    sortBy: (SORT_FIELDS as readonly string[]).includes(sortBy ?? '') ? (sortBy as SortField) : 'createdAt',
    sortDirection: direction === 'asc' ? 'asc' : 'desc',
    page: Number.isInteger(page) && page >= 1 ? page : 1,
    cursor: cursor.length <= MAX_CURSOR_LENGTH ? cursor : '',
    pageSize: (PAGE_SIZES as readonly number[]).includes(pageSize) ? pageSize : DEFAULT_FILTERS.pageSize,
  };
}

export function filtersToSearch(filters: JobFilters): URLSearchParams {
  const search = new URLSearchParams();
  if (filters.status.length > 0) search.set('status', filters.status.join(','));
  const text: (keyof JobFilters)[] = [
    'type',
    'priority',
    'createdFrom',
    'createdTo',
    'submittedBy',
    'scheduleId',
    'batchId',
    'search',
  ];
  for (const key of text) {
    const value = filters[key];
    if (typeof value === 'string' && value) search.set(key, value);
  }
  if (filters.sortBy !== DEFAULT_FILTERS.sortBy) search.set('sortBy', filters.sortBy);
  if (filters.sortDirection !== DEFAULT_FILTERS.sortDirection) search.set('sortDirection', filters.sortDirection);
  if (filters.page !== 1) search.set('page', String(filters.page));
  if (filters.cursor) search.set('cursor', filters.cursor);
  if (filters.pageSize !== DEFAULT_FILTERS.pageSize) search.set('pageSize', String(filters.pageSize));
  return search;
}

export function toListParams(filters: JobFilters): JobListParams {
  const params: JobListParams = {
    // a cursor names its page (the API ignores pageNumber then, but still checks its range)
    ...(filters.cursor ? { cursor: filters.cursor } : { pageNumber: filters.page }),
    pageSize: filters.pageSize,
    sortBy: filters.sortBy,
    sortDirection: filters.sortDirection,
  };
  if (filters.status.length > 0) params.status = filters.status;
  if (filters.type) params.type = filters.type;
  if (filters.priority) params.priority = Number(filters.priority);
  if (filters.createdFrom) params.createdFrom = filters.createdFrom;
  if (filters.createdTo) params.createdTo = filters.createdTo;
  if (filters.submittedBy) params.submittedBy = filters.submittedBy;
  if (filters.scheduleId) params.scheduleId = filters.scheduleId;
  if (filters.batchId) params.batchId = filters.batchId;
  if (filters.search) params.search = filters.search;
  return params;
}

/** The number of filters in use (not sorting or paging). */
export function activeFilterCount(filters: JobFilters): number {
  return [
    filters.status.length > 0,
    filters.type,
    filters.priority,
    filters.createdFrom,
    filters.createdTo,
    filters.submittedBy,
    filters.scheduleId,
    filters.batchId,
    filters.search,
  ].filter(Boolean).length;
}
