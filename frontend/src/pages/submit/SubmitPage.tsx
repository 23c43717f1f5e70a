import { Link, useSearchParams } from 'react-router';
import { usePageTitle } from '../../lib/usePageTitle';
import { BatchForm } from './BatchForm';
import { JobForm } from './JobForm';

export function SubmitPage() {
  const [params] = useSearchParams();
  const mode = params.get('mode') === 'batch' ? 'batch' : 'single';
  usePageTitle(mode === 'batch' ? 'Submit a batch' : 'Submit a job');
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
      <div className="card">{mode === 'batch' ? <BatchForm /> : <JobForm />}</div>
    </>
  );
}
