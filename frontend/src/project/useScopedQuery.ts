/**
 * Queries of a project's data: the key carries the project chosen (so switching never shows
 * another project's cached answer) and the request acts in that same project (`X-Project`,
 * pinned while the query function starts its request: api/projectScope.ts).
 *
 * Every query whose request goes to a project-scoped route (every `/api` route but the
 * organization and project ones) uses this hook instead of `useQuery`.
 */
import { useQuery, type QueryKey, type UseQueryOptions, type UseQueryResult } from '@tanstack/react-query';
import { inProject } from '../api/projectScope';
import { useProjectId } from './navigation';

/** The part of a query key that names the project (null: all projects). */
export interface ProjectKeyPart {
  project: string | null;
}

/**
 * `key` for the data of `projectId`. The project goes last, so the prefixes live events and
 * mutations invalidate (`['jobs', 'list']`, `['jobs', 'detail', id]`) cover every project's.
 */
export function scopedKey(key: QueryKey, projectId: string | null): QueryKey {
  return [...key, { project: projectId } satisfies ProjectKeyPart];
}

export type ScopedQueryOptions<TQueryFnData, TError, TData> = Omit<
  UseQueryOptions<TQueryFnData, TError, TData>,
  'queryKey' | 'queryFn'
> & {
  /** The key without its project (`queryKeys.*`). */
  queryKey: QueryKey;
  /** Starts its request synchronously (a function of api/endpoints.ts). */
  queryFn: (context: { signal: AbortSignal }) => Promise<TQueryFnData>;
};

/** `useQuery` for the chosen project's data. */
export function useScopedQuery<TQueryFnData, TError = Error, TData = TQueryFnData>(
  options: ScopedQueryOptions<TQueryFnData, TError, TData>,
): UseQueryResult<TData, TError> {
  const projectId = useProjectId();
  const { queryKey, queryFn, ...rest } = options;
  return useQuery<TQueryFnData, TError, TData>({
    ...rest,
    queryKey: scopedKey(queryKey, projectId),
    queryFn: ({ signal }) => inProject(projectId, () => queryFn({ signal })),
  });
}
