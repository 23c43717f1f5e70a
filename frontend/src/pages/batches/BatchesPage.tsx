import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type SyntheticEvent } from 'react';
import { listBatches } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { BatchProgress } from '../../components/BatchProgress';
import { InputField } from '../../components/Field';
import { PageHeader } from '../../components/PageHeader';
import { QueryList } from '../../components/QueryList';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useProjectId, useSearchParams } from '../../project/navigation';
import { scopedKey, useScopedQuery } from '../../project/useScopedQuery';
import { idPrefixProblem } from '../../lib/idPrefix';

const PAGE_SIZE = 10;

/** The Batch id filter: a short id as the console shows it (8 characters) or a whole one. */
function BatchIdFilter({ value, onApply }: { value: string; onApply: (batchId: string) => void }) {
  const [text, setText] = useState(value);
  const [applied, setApplied] = useState(value);
  const [error, setError] = useState<string | undefined>(undefined);
  if (applied !== value) {
    // the address changed (Show all, back): the input follows it
    setApplied(value);
    setText(value);
  }
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const problem = idPrefixProblem(text);
    setError(problem ?? undefined);
    if (!problem) onApply(text.trim());
  };
  return (
    <form className="toolbar" role="search" aria-label="Filter batches" onSubmit={submit} noValidate>
      <InputField
        path="batchId"
        label="Batch id"
        hint="8 or more characters of the id, as shown, or the whole id"
        error={error}
        value={text}
        onChange={setText}
        className="mono"
        autoComplete="off"
        spellCheck={false}
        maxLength={64}
      />
      <button type="submit">Filter</button>
      {value ? (
        <button
          type="button"
          onClick={() => {
            setError(undefined);
            onApply('');
          }}
        >
          Show all
        </button>
      ) : null}
    </form>
  );
}

/** Batches of the projects followed, newest first, each with its progress. */
export function BatchesPage() {
  usePageTitle('Batches');
  const client = useQueryClient();
  const projectId = useProjectId();
  const [params, setParams] = useSearchParams();
  const page = Math.max(1, Number(params.get('page') ?? '1') || 1);
  const batchId = params.get('batchId') ?? '';
  const poll = usePollWhileOffline(5_000);
  const { submit } = useRights();
  const batches = useScopedQuery({
    queryKey: queryKeys.batchList(page, batchId),
    queryFn: ({ signal }) => listBatches(page, PAGE_SIZE, signal, batchId || undefined),
    refetchInterval: poll,
  });
  useEffect(() => {
    // each card reads its batch's progress from the cache the list just filled
    for (const batch of batches.data?.items ?? []) {
      client.setQueryData(scopedKey(queryKeys.batchView(batch.batchId), projectId), batch);
    }
  }, [batches.data, client, projectId]);
  const go = (next: { page?: number; batchId?: string }) => {
    const id = next.batchId ?? batchId;
    setParams({ ...(id ? { batchId: id } : {}), ...(next.page && next.page > 1 ? { page: String(next.page) } : {}) });
  };

  return (
    <>
      <PageHeader title="Batches" link={submit ? { to: '/submit?mode=batch', label: 'Submit a batch' } : undefined} />
      <BatchIdFilter value={batchId} onApply={(id) => go({ batchId: id, page: 1 })} />
      <QueryList
        query={batches}
        loadingLabel="Loading batches…"
        empty={
          batchId ? (
            <>No batch of yours has an id starting with {batchId}.</>
          ) : (
            <>
              No batches yet.{submit ? <> <Link to="/submit?mode=batch">Submit one</Link>.</> : null}
            </>
          )
        }
        pagination={{ page, onPage: (next) => go({ page: next }), label: 'Batch pages' }}
      >
        {(rows) => rows.map((batch) => <BatchProgress key={batch.batchId} batchId={batch.batchId} />)}
      </QueryList>
    </>
  );
}
