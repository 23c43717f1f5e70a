import { useQuery } from '@tanstack/react-query';
import { useState, type SyntheticEvent } from 'react';
import { Link } from 'react-router';
import { listJobs } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';
import { useAuth } from '../auth/hooks';
import { BatchProgress } from '../components/BatchProgress';
import { Empty } from '../components/states';
import { isUuid } from '../lib/jobForm';
import { forgetBatch, loadRecentBatches, rememberBatch, type RecentBatch } from '../lib/recentBatches';
import { usePageTitle } from '../lib/usePageTitle';

/**
 * Progress of batches. There is no "list batches" endpoint, so the page shows the batches
 * submitted from this browser, the batches of the 100 newest jobs, and any id looked up here.
 */
export function BatchesPage() {
  usePageTitle('Batches');
  const owner = useAuth((state) => state.session?.user.email ?? '');
  const [recent, setRecent] = useState<RecentBatch[]>(() => loadRecentBatches(owner));
  const [lookup, setLookup] = useState('');
  const [lookupError, setLookupError] = useState<string | null>(null);
  const newest = useQuery({
    queryKey: [...queryKeys.jobLists, { batchesOfNewest: true }],
    queryFn: ({ signal }) => listJobs({ pageSize: 100, sortBy: 'createdAt', sortDirection: 'desc' }, signal),
  });
  const known = new Set(recent.map((b) => b.batchId));
  const discovered = [...new Set((newest.data?.items ?? []).map((job) => job.batchId).filter((id): id is string => id !== null))].filter(
    (id) => !known.has(id),
  );

  const add = (event: SyntheticEvent) => {
    event.preventDefault();
    const id = lookup.trim().toLowerCase();
    if (!isUuid(id)) {
      setLookupError('Enter a batch id (uuid)');
      return;
    }
    setLookupError(null);
    rememberBatch(owner, { batchId: id, name: null, size: 0, submittedAt: new Date().toISOString() });
    setRecent(loadRecentBatches(owner));
    setLookup('');
  };

  return (
    <>
      <div className="page-header">
        <h1>Batches</h1>
        <Link to="/submit?mode=batch" className="button primary">
          Submit a batch
        </Link>
      </div>
      <form className="card toolbar" onSubmit={add} aria-label="Follow a batch by id">
        <div className="field" style={{ marginBottom: 0, flex: '1 1 20rem' }}>
          <label htmlFor="batch-lookup">Follow a batch by id</label>
          <input
            id="batch-lookup"
            className="mono"
            value={lookup}
            onChange={(e) => setLookup(e.target.value)}
            aria-invalid={Boolean(lookupError)}
            aria-describedby={lookupError ? 'batch-lookup-error' : undefined}
          />
          {lookupError ? (
            <span id="batch-lookup-error" className="field-error">
              {lookupError}
            </span>
          ) : null}
        </div>
        <button type="submit">Follow</button>
      </form>

      <h2>Submitted from this browser</h2>
      {recent.length === 0 ? <Empty>None yet.</Empty> : null}
      {recent.map((batch) => (
        <div key={batch.batchId}>
          <BatchProgress batchId={batch.batchId} {...(batch.name ? { title: batch.name } : {})} />
          <button
            type="button"
            className="link"
            onClick={() => {
              forgetBatch(owner, batch.batchId);
              setRecent(loadRecentBatches(owner));
            }}
            style={{ marginBottom: '1rem' }}
          >
            Stop following {batch.name ?? batch.batchId.slice(0, 8)}
          </button>
        </div>
      ))}

      {discovered.length > 0 ? (
        <>
          <h2>Batches of your newest jobs</h2>
          {discovered.map((id) => (
            <BatchProgress key={id} batchId={id} />
          ))}
        </>
      ) : null}
    </>
  );
}
