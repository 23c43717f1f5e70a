import type { RunningJob } from '../../api/types';
import { JobLink } from '../../components/JobLink';
import { elapsed } from './elapsed';

/** What a worker runs now (Sidekiq's Busy page): each job's link, type and elapsed time. */
export function RunningJobs({ jobs, now, workerId }: { jobs: readonly RunningJob[]; now: number; workerId: string }) {
  if (jobs.length === 0) return <p className="muted worker-idle">Idle: no job running.</p>;
  return (
    <ul className="worker-jobs" aria-label={`Jobs running on ${workerId}`} data-testid="worker-jobs">
      {jobs.map((job) => (
        <li key={`${job.jobId}:${job.attempt}`} data-testid="worker-job" data-job-id={job.jobId}>
          <JobLink jobId={job.jobId} label={`Job ${job.jobId}, ${job.jobType}`} />
          <span className="worker-job-type">{job.jobType}</span>
          {job.attempt > 1 ? <span className="muted">attempt {job.attempt}</span> : null}
          <span className="worker-job-elapsed" data-testid="worker-job-elapsed">
            {job.startedAt ? elapsed(Math.max(0, now - new Date(job.startedAt).getTime())) : '—'}
            {job.progress !== null ? ` · ${Math.round(job.progress)} %` : ''}
          </span>
        </li>
      ))}
    </ul>
  );
}
