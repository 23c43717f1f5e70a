import type { AttemptError } from '../../api/types';

/** "attempt 2: SimulatedFailure" (the class, else the message; no attempt when none ran). */
function errorLabel(error: AttemptError): string {
  const what = error.errorClass ?? error.message ?? 'error';
  return error.attempt === null ? what : `attempt ${error.attempt}: ${what}`;
}

/**
 * A job's latest error in the jobs list: as the job's present state (danger) only while it is
 * (dead, failed, waiting to retry after it); an error a later attempt overcame is muted and
 * said to be an earlier attempt's. The message is in the title.
 */
export function LatestError({ error }: { error: AttemptError | null | undefined }) {
  if (!error) return null;
  const label = errorLabel(error);
  if (error.current)
    return (
      <span className="danger-text" title={error.message ?? undefined} data-testid="job-error-current">
        {label}
      </span>
    );
  return (
    <span className="muted" title={`An earlier attempt's error${error.message ? `: ${error.message}` : ''}`} data-testid="job-error-earlier">
      earlier: {label}
    </span>
  );
}
