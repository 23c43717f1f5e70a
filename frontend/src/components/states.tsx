import type { ReactNode } from 'react';
import { useLocation } from 'react-router';
import { errorMessage, isApiError } from '../api/client';
import { Link } from '../project/links';
import { switchTarget } from '../project/url';

/** The gateway's answer to a request naming a project the user does not see (any more). */
function projectNotFound(error: unknown): boolean {
  return isApiError(error) && error.status === 404 && error.message === 'project not found';
}

/** The same page for all projects. */
function AllProjectsLink() {
  const location = useLocation();
  return (
    <Link to={switchTarget(location, null)} project={null}>
      Show all projects
    </Link>
  );
}

export function Loading({ label = 'Loading…' }: { label?: string }) {
  return (
    <div className="state" role="status" aria-live="polite">
      <span className="spinner" aria-hidden="true" />
      {label}
    </div>
  );
}

export function Empty({ children }: { children: ReactNode }) {
  return (
    <div className="state" data-testid="empty-state">
      {children}
    </div>
  );
}

export function ErrorState({
  error,
  onRetry,
  title = 'Could not load this',
}: {
  error: unknown;
  onRetry?: () => void;
  title?: string;
}) {
  const code = isApiError(error) ? error.code : null;
  return (
    <div className="state state-error" role="alert">
      <strong>{title}.</strong> {errorMessage(error)}
      {code && code !== 'network_error' ? <span className="muted"> ({code})</span> : null}
      {projectNotFound(error) ? (
        <>
          {' '}
          <AllProjectsLink />
        </>
      ) : null}
      {onRetry ? (
        <div style={{ marginTop: '0.5rem' }}>
          <button type="button" onClick={onRetry}>
            Try again
          </button>
        </div>
      ) : null}
    </div>
  );
}
