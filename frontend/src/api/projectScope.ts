/**
 * Which project an API request acts in (docs/tenancy.md, "Which project a request acts in").
 *
 * The console's project choice lives in the URL (`?project=<id>`, src/project/url.ts). Every
 * request under `/api` that carries the session sends it as `X-Project`, except the gateway's
 * own organization and project routes (`/api/organizations*`, `/api/projects*`), which name
 * their organization or project themselves. Without a choice no header is sent: reads cover
 * every project of the user, submissions go to their personal default project.
 *
 * The project a request goes out with is read once, when the request starts:
 *
 * - a query pins the project its key was made for (`inProject`, used by `useScopedQuery`), so
 *   a cached answer always belongs to its key's project, also when the choice changed while
 *   an older key was refetched;
 * - anything else (a mutation, a submission) acts in the project chosen now: the one the app
 *   last committed from the URL (`setChosenProject`).
 */

export const PROJECT_HEADER = 'X-Project';

/** Whether a request to `path` (with the session) says which project it acts in. */
export function sendsProjectHeader(path: string): boolean {
  const pathname = path.split(/[?#]/, 1)[0] ?? '';
  if (!pathname.startsWith('/api/')) return false;
  return !/^\/api\/(organizations|projects)(\/|$)/.test(pathname);
}

let chosen: string | null = null;
let pinned: { project: string | null } | null = null;

/** The project chosen in the URL (null: all projects); the app sets it when the URL changes. */
export function setChosenProject(projectId: string | null): void {
  chosen = projectId;
}

/** The project a request starting now acts in: the pinned one, else the one chosen. */
export function requestProject(): string | null {
  return pinned ? pinned.project : chosen;
}

/**
 * Run `start` (which starts its requests synchronously, as every function of endpoints.ts
 * does) with `projectId` as the project of those requests, whatever is chosen meanwhile.
 */
export function inProject<T>(projectId: string | null, start: () => T): T {
  const before = pinned;
  pinned = { project: projectId };
  try {
    return start();
  } finally {
    pinned = before;
  }
}
