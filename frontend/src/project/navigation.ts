/**
 * The router's hooks, keeping the chosen project (`?project=`, ./url.ts) on every navigation:
 * pages import `useNavigate` and `useSearchParams` from here, never from react-router (ESLint
 * refuses it), so no page can drop the project by forgetting it.
 */
import { useCallback, useMemo } from 'react';
import {
  createSearchParams,
  useNavigate as useRouterNavigate,
  useSearchParams as useRouterSearchParams,
  type NavigateOptions,
  type To,
  type URLSearchParamsInit,
} from 'react-router';
import { keepProject, PROJECT_PARAM, projectFromSearch } from './url';

/** The project the URL chooses (null: all projects). */
export function useProjectId(): string | null {
  const [search] = useRouterSearchParams();
  return projectFromSearch(search);
}

export interface ProjectNavigateOptions extends NavigateOptions {
  /** The project of the target (null: all projects); default: the one chosen now. */
  project?: string | null;
}

/** `useNavigate` whose targets keep the chosen project unless they name one. */
export function useNavigate(): (to: To, options?: ProjectNavigateOptions) => void {
  const navigate = useRouterNavigate();
  const current = useProjectId();
  return useCallback(
    (to: To, options: ProjectNavigateOptions = {}) => {
      const { project, ...rest } = options;
      void navigate(keepProject(to, project === undefined ? current : project), rest);
    },
    [navigate, current],
  );
}

type SearchInit = URLSearchParamsInit | ((previous: URLSearchParams) => URLSearchParamsInit);

/** `useSearchParams` whose setter keeps the chosen project unless the new parameters name one. */
export function useSearchParams(): [URLSearchParams, (next: SearchInit, options?: NavigateOptions) => void] {
  const [search, setSearch] = useRouterSearchParams();
  const current = projectFromSearch(search);
  const set = useCallback(
    (next: SearchInit, options?: NavigateOptions) => {
      setSearch((previous) => {
        const params = createSearchParams(typeof next === 'function' ? next(previous) : next);
        if (current && !params.has(PROJECT_PARAM)) params.set(PROJECT_PARAM, current);
        return params;
      }, options);
    },
    [setSearch, current],
  );
  return useMemo(() => [search, set], [search, set]);
}
