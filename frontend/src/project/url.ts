/**
 * The project the console follows lives in the URL, as `?project=<project id>`, so a link, a
 * reload or a new tab opens the same project. Pure helpers; the routing wrappers of
 * ./routing.tsx apply them to every in-app link and navigation.
 */
import type { Path, To } from 'react-router';

export const PROJECT_PARAM = 'project';

const MAX_LENGTH = 200;

/** The project a query string chooses; null for none ("All projects"). */
export function projectFromSearch(search: string | URLSearchParams): string | null {
  const params = typeof search === 'string' ? new URLSearchParams(search) : search;
  const value = (params.get(PROJECT_PARAM) ?? '').trim();
  return value && value.length <= MAX_LENGTH ? value : null;
}

function withParam(search: string, projectId: string | null): string {
  const params = new URLSearchParams(search);
  if (projectId) params.set(PROJECT_PARAM, projectId);
  else params.delete(PROJECT_PARAM);
  const text = params.toString();
  return text ? `?${text}` : '';
}

function splitPath(to: string): Partial<Path> {
  const hashAt = to.indexOf('#');
  const hash = hashAt >= 0 ? to.slice(hashAt) : '';
  const rest = hashAt >= 0 ? to.slice(0, hashAt) : to;
  const searchAt = rest.indexOf('?');
  return {
    pathname: searchAt >= 0 ? rest.slice(0, searchAt) : rest,
    search: searchAt >= 0 ? rest.slice(searchAt) : '',
    hash,
  };
}

/**
 * `to` with `projectId` as its project: a link that names a project itself keeps it; one that
 * names none gets `projectId` (none when null).
 */
export function keepProject(to: string, projectId: string | null): string;
export function keepProject(to: To, projectId: string | null): To;
export function keepProject(to: To, projectId: string | null): To {
  const path = typeof to === 'string' ? splitPath(to) : to;
  const search = path.search ?? '';
  if (projectFromSearch(search) !== null || projectId === null) return to;
  const next = { ...path, search: withParam(search, projectId) };
  if (typeof to !== 'string') return next;
  return `${next.pathname ?? ''}${next.search}${next.hash ?? ''}`;
}

/** Query parameters that name a place in one project's listing: meaningless in another. */
const LISTING_PLACE = ['page', 'cursor', 'letter'];

/**
 * Where the switcher goes from `location` when `projectId` is chosen (null: all projects): the
 * same page and filters, from its first page; a job's page goes to the jobs list (the job is
 * one project's), a project's API keys to the chosen project's.
 */
export function switchTarget(location: Pick<Path, 'pathname' | 'search' | 'hash'>, projectId: string | null): string {
  const params = new URLSearchParams(location.search);
  for (const name of LISTING_PLACE) params.delete(name);
  let pathname = location.pathname;
  if (/^\/jobs\/[^/]+\/?$/.test(pathname)) pathname = '/jobs';
  const keys = /^\/projects\/[^/]+\/api-keys\/?$/.test(pathname);
  if (keys && projectId) pathname = `/projects/${encodeURIComponent(projectId)}/api-keys`;
  return `${pathname}${withParam(params.toString(), projectId)}`;
}
