import { useQuery, useQueryClient } from '@tanstack/react-query';
import { useEffect } from 'react';
import { Link, useSearchParams } from 'react-router';
import { listBatches } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { BatchProgress } from '../../components/BatchProgress';
import { PageHeader } from '../../components/PageHeader';
import { QueryList } from '../../components/QueryList';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';

const PAGE_SIZE = 10;

/** Batches, newest first (a user's own, an admin's all), each with its progress. */
export function BatchesPage() {
  usePageTitle('Batches');
  const client = useQueryClient();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page') ?? '1') || 1);
  const poll = usePollWhileOffline(5_000);
  const batches = useQuery({
    queryKey: queryKeys.batchList(page),
    queryFn: ({ signal }) => listBatches(page, PAGE_SIZE, signal),
    refetchInterval: poll,
  });
  useEffect(() => {
    // each card reads its batch's progress from the cache the list just filled
    for (const batch of batches.data?.items ?? []) client.setQueryData(queryKeys.batchView(batch.batchId), batch);
  }, [batches.data, client]);

  return (
    <>
      <PageHeader title="Batches" link={{ to: '/submit?mode=batch', label: 'Submit a batch' }} />
      <QueryList
        query={batches}
        loadingLabel="Loading batches…"
        empty={
          <>
            No batches yet. <Link to="/submit?mode=batch">Submit one</Link>.
          </>
        }
        pagination={{ page, onPage: (next) => setParams({ page: String(next) }), label: 'Batch pages' }}
      >
        {(rows) => rows.map((batch) => <BatchProgress key={batch.batchId} batchId={batch.batchId} />)}
      </QueryList>
    </>
  );
}
