import type { JobDetail } from '../../api/types';
import { DependencyGraph, type GraphNode } from '../../components/DependencyGraph';
import { JobLink } from '../../components/JobLink';
import { StatusBadge } from '../../components/StatusBadge';

/** The job's parents (which must succeed first) and children (which wait for it). */
export function JobDependencies({ job }: { job: JobDetail }) {
  const children: GraphNode[] = job.children.map((child) => ({ jobId: child.jobId, status: child.status }));
  const parents: GraphNode[] = job.parents.map((parent) => ({ jobId: parent.jobId, status: parent.status }));
  if (parents.length === 0 && children.length === 0) {
    return <p className="muted">No parents and no children.</p>;
  }
  return (
    <>
      <div className="graph">
        <DependencyGraph job={{ jobId: job.jobId, status: job.status }} parents={parents} children={children} />
      </div>
      <div className="grid grid-2">
        <div>
          <h3>Parents (must succeed first)</h3>
          {parents.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <ul data-testid="job-parents">
              {parents.map((parent) => (
                <li key={parent.jobId}>
                  <JobLink jobId={parent.jobId} />{' '}
                  <StatusBadge status={parent.status ?? 'pending'} label={parent.status ?? 'not recorded yet'} />
                </li>
              ))}
            </ul>
          )}
        </div>
        <div>
          <h3>Children (wait for this one)</h3>
          {children.length === 0 ? (
            <p className="muted">None.</p>
          ) : (
            <ul data-testid="job-children">
              {children.map((child) => (
                <li key={child.jobId}>
                  <JobLink jobId={child.jobId} />{' '}
                  <StatusBadge status={child.status ?? 'pending'} />
                </li>
              ))}
            </ul>
          )}
          {job.childrenTotal > children.length ? (
            <p className="muted">
              {children.length} of {job.childrenTotal} shown (the oldest).
            </p>
          ) : null}
        </div>
      </div>
    </>
  );
}
