import { useIsAdmin } from '../../auth/hooks';
import { Denied } from '../../components/Denied';
import { usePageTitle } from '../../lib/usePageTitle';
import { actingProject, deniedReason, useProjectAccess, useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useSearchParams } from '../../project/navigation';
import { BatchForm } from './BatchForm';
import { JobForm } from './JobForm';

/**
 * Where a submission goes: the project chosen, else the user's personal default project (an
 * admin's job "Submit for" someone: that user's).
 */
function SubmitTarget({ submitFor }: { submitFor: boolean }) {
  const access = useProjectAccess();
  const target = access ? actingProject(access) : null;
  const chosen = access?.projectId !== null && access?.projectId !== undefined;
  const personal = `your personal default project${submitFor ? ' (with “Submit for”, that user’s)' : ''}`;
  return (
    <p data-testid="submit-target">
      Submitting to{' '}
      {target ? (
        <>
          <strong>{target.project.name}</strong>
          {target.org ? ` (${target.org.name})` : ''}
          {chosen ? '' : `, ${personal}`}
        </>
      ) : (
        <strong>{chosen ? 'the project chosen' : personal}</strong>
      )}
      .{chosen ? '' : ' Choose a project above to submit to another.'}
    </p>
  );
}

export function SubmitPage() {
  const [params] = useSearchParams();
  const mode = params.get('mode') === 'batch' ? 'batch' : 'single';
  usePageTitle(mode === 'batch' ? 'Submit a batch' : 'Submit a job');
  const rights = useRights();
  const isAdmin = useIsAdmin();
  return (
    <>
      <h1>{mode === 'batch' ? 'Submit a batch' : 'Submit a job'}</h1>
      <nav className="tabs" aria-label="Submit">
        <Link to="/submit" aria-current={mode === 'single' ? 'page' : undefined}>
          Single job
        </Link>
        <Link to="/submit?mode=batch" aria-current={mode === 'batch' ? 'page' : undefined}>
          Batch
        </Link>
      </nav>
      <div className="card">
        <SubmitTarget submitFor={isAdmin && mode === 'single'} />
        {!rights.submit ? (
          <Denied testId="submit-denied">{deniedReason(rights, 'submit', 'submitting jobs and batches')}</Denied>
        ) : mode === 'batch' ? (
          <BatchForm />
        ) : (
          <JobForm />
        )}
      </div>
    </>
  );
}
