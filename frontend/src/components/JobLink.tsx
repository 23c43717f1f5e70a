import { shortId } from '../lib/format';
import { Link } from '../project/links';

/** A link to a job's page, shown by the start of its id. */
export function JobLink({ jobId, label }: { jobId: string; /** The link's accessible name, when the short id is not enough. */ label?: string }) {
  return (
    <Link to={`/jobs/${jobId}`} className="mono" aria-label={label}>
      {shortId(jobId)}
    </Link>
  );
}
