import { useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { listBatches } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { BatchProgress } from '../../components/BatchProgress';
import { PageHeader } from '../../components/PageHeader';
import { QueryList } from '../../components/QueryList';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useProjectId, useSearchParams } from '../../project/navigation';
import { scopedKey, useScopedQuery } from '../../project/useScopedQuery';

const PAGE_SIZE = 10;

/** Batches of the projects followed, newest first, each with its progress. */
export function BatchesPage() {
  usePageTitle('Batches');
  const client = useQueryClient();
  const projectId = useProjectId();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page') ?? '1') || 1);
  const poll = usePollWhileOffline(5_000);
  const { submit } = useRights();
  const batches = useScopedQuery({
    queryKey: queryKeys.batchList(page),
    queryFn: ({ signal }) => listBatches(page, PAGE_SIZE, signal),
    refetchInterval: poll,
  });
  useEffect(() => {
    // each card reads its batch's progress from the cache the list just filled
    for (const batch of batches.data?.items ?? []) {
      client.setQueryData(scopedKey(queryKeys.batchView(batch.batchId), projectId), batch);
    }
  }, [batches.data, client, projectId]);

  return (
    <>
      <PageHeader title="Batches" link={submit ? { to: '/submit?mode=batch', label: 'Submit a batch' } : undefined} />
      <QueryList
        query={batches}
        loadingLabel="Loading batches…"
        empty={
          <>
            No batches yet.{submit ? <> <Link to="/submit?mode=batch">Submit one</Link>.</> : null}
          </>
        }
        pagination={{ page, onPage: (next) => setParams({ page: String(next) }), label: 'Batch pages' }}
      >
        {(rows) => rows.map((batch) => <BatchProgress key={batch.batchId} batchId={batch.batchId} />)}
      </QueryList>
    </>
  );
}
