import type { JobTypeInfo } from '../api/types';

/** The API reference of GET /api/job-types (the gateway's /docs, deep-linked by tag and operation). */
const JOB_TYPES_DOCS = '/docs#/job%20types/list_job_types_api_v1_job_types_get';

/**
 * The job types no live worker serves (`liveWorkers` 0: no worker announced the type within
 * three announce intervals), or nothing when every type has one. How to start a worker is for
 * those who run them (`instructions`: admins); others read that their jobs wait.
 */
export function TypesWithoutWorkers({
  types,
  instructions = true,
}: {
  types: readonly JobTypeInfo[];
  instructions?: boolean;
}) {
  const idle = types.filter((t) => t.liveWorkers === 0).map((t) => t.type);
  if (idle.length === 0) return null;
  return (
    <section className="card card-warn" aria-labelledby="idle-types-heading" data-testid="types-without-workers">
      <h2 id="idle-types-heading">
        No live worker for: <span className="mono">{idle.join(', ')}</span>
      </h2>
      <p style={{ margin: 0 }}>
        Jobs of {idle.length === 1 ? 'this type' : 'these types'} are accepted and wait in their queue (
        <code>queued</code>) until a worker that serves {idle.length === 1 ? 'it' : 'them'} starts: none has announced{' '}
        {idle.length === 1 ? 'it' : 'them'} in the last three announce intervals (90 s by default).{' '}
        {instructions ? (
          <>
            Start workers that load the handler modules (
            <code>WORKER_HANDLER_MODULES=&lt;module&gt; python -m jobs_worker</code>; handler SDK: <code>docs/sdk.md</code>
            ).{' '}
          </>
        ) : (
          <>An administrator of the platform can start one. </>
        )}
        <a href={JOB_TYPES_DOCS}>Job types in the API reference</a>
      </p>
    </section>
  );
}
