/**
 * Reading every organization and project of the user (the switcher's list): both lists are
 * paged (at most 100 a page); the pages after the first are read together, up to
 * `MAX_PAGES`. A user who sees more is told the list is cut (`truncated`): a project past it
 * is still looked up by its id when the URL names it.
 */
import { useQuery } from '@tanstack/react-query';
import { useMemo } from 'react';
import { isApiError } from '../api/client';
import { getOrganization, getProject, listOrganizations, listProjects, type PageParams } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';
import { useAuth, useIsAdmin } from '../auth/hooks';
import { buildDirectory, type AccessState, type ProjectAccess, type ProjectEntry } from './access';
import { useProjectId } from './navigation';

export const PAGE_SIZE = 100;
export const MAX_PAGES = 10;

interface Paged<T> {
  items: T[];
  totalPages: number;
}

/** Every item of a paged list (at most `maxPages` pages of `PAGE_SIZE`). */
export async function readAllPages<T>(
  read: (params: PageParams, signal?: AbortSignal) => Promise<Paged<T>>,
  signal?: AbortSignal,
  maxPages = MAX_PAGES,
): Promise<{ items: T[]; truncated: boolean }> {
  const first = await read({ pageNumber: 1, pageSize: PAGE_SIZE }, signal);
  const last = Math.min(first.totalPages, maxPages);
  const rest = await Promise.all(
    Array.from({ length: Math.max(0, last - 1) }, (_, i) => read({ pageNumber: i + 2, pageSize: PAGE_SIZE }, signal)),
  );
  return { items: [first, ...rest].flatMap((page) => page.items), truncated: first.totalPages > maxPages };
}

/** A 4xx: the project is unknown, not the user's, or its id malformed. */
function refused(error: unknown): boolean {
  return isApiError(error) && error.status >= 400 && error.status < 500;
}

/** The user's projects and roles, and the project the URL chooses (./access.ts). */
export function useLoadedAccess(): ProjectAccess {
  const projectId = useProjectId();
  const platformAdmin = useIsAdmin();
  const email = useAuth((state) => state.session?.user.email ?? null);
  const orgs = useQuery({
    queryKey: queryKeys.organizationDirectory,
    queryFn: ({ signal }) => readAllPages(listOrganizations, signal),
  });
  const projects = useQuery({
    queryKey: queryKeys.projectDirectory,
    queryFn: ({ signal }) => readAllPages((params, s) => listProjects(params, s), signal),
  });
  const orgItems = orgs.data?.items;
  const projectItems = projects.data?.items;
  const truncated = Boolean(orgs.data?.truncated) || Boolean(projects.data?.truncated);
  const directory = useMemo(
    () => buildDirectory(orgItems ?? [], projectItems ?? [], { email, truncated }),
    [orgItems, projectItems, email, truncated],
  );
  const listed = projectId ? (directory.entries.get(projectId) ?? null) : null;
  const read = orgItems !== undefined && projectItems !== undefined;

  // Not in the lists (created since they were read, or past their end): ask for it by id. Its
  // role is its organization's, listed or asked for too.
  const lookUp = projectId !== null && read && listed === null;
  const lookup = useQuery({
    queryKey: queryKeys.project(projectId ?? ''),
    queryFn: ({ signal }) => getProject(projectId ?? '', signal),
    enabled: lookUp,
    retry: (count, error) => !refused(error) && count < 2,
  });
  const orgId = lookUp ? lookup.data?.orgId : undefined;
  const listedOrg = orgId ? orgItems?.find((org) => org.id === orgId) : undefined;
  const orgLookup = useQuery({
    queryKey: queryKeys.organization(orgId ?? ''),
    queryFn: ({ signal }) => getOrganization(orgId ?? '', signal),
    enabled: orgId !== undefined && listedOrg === undefined,
    retry: (count, error) => !refused(error) && count < 2,
  });

  let state: AccessState;
  let error: unknown = null;
  let chosen: ProjectEntry | null = listed;
  if ((orgs.isError && !orgs.data) || (projects.isError && !projects.data)) {
    state = 'error';
    error = orgs.error ?? projects.error;
  } else if (!read) {
    state = 'loading';
  } else if (!lookUp) {
    state = 'ready';
  } else if (lookup.isError) {
    state = refused(lookup.error) ? 'missing' : 'error';
    error = lookup.error;
  } else if (!lookup.data) {
    state = 'loading';
  } else {
    const org = listedOrg ?? orgLookup.data ?? null;
    if (!org && orgLookup.isPending) {
      state = 'loading';
    } else {
      state = 'ready';
      chosen = { project: lookup.data, org, role: org?.role ?? null };
    }
  }
  return { state, error, projectId, chosen, directory, platformAdmin };
}
