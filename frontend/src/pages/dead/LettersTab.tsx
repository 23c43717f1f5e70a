import { useQuery } from '@tanstack/react-query';
import { isApiError } from '../../api/client';
import { getDeadLetter } from '../../api/endpoints';
import type { DeadLetterItem, DeadLetterPage } from '../../api/types';
import { JobLink } from '../../components/JobLink';
import type { Column } from '../../components/ListTable';
import { QueryTable, type ListQuery } from '../../components/QueryList';
import { SelectAllCheckbox, SelectRowCheckbox } from '../../components/SelectCheckbox';
import { StatusBadge } from '../../components/StatusBadge';
import { Empty, Loading } from '../../components/states';
import { BULK_ACTIONS, BULK_VERBS } from '../../lib/deadLetters';
import { formatDateTime, shortId } from '../../lib/format';
import type { Selection } from '../../lib/useSelection';
import type { BulkIntent } from './BulkPanel';
import { InspectPanel } from './InspectPanel';

const COLUMNS: readonly Column[] = [
  { label: 'Job' },
  { label: 'Type' },
  { label: 'Reason' },
  { label: 'Last error' },
  { label: 'Dead since' },
  { label: 'State' },
  { label: <span className="visually-hidden">Inspect</span> },
];

/** Find one letter: on the loaded page, else asked for by its id (a 404 means gone or not yours). */
function useLetter(id: string | null, page: DeadLetterItem[] | undefined) {
  const local = id ? page?.find((letter) => letter.id === id) : undefined;
  const remote = useQuery({
    queryKey: ['dead-letters', 'one', id],
    queryFn: async ({ signal }) => {
      try {
        return await getDeadLetter(id ?? '', signal);
      } catch (error) {
        if (isApiError(error) && error.status === 404) return null;
        throw error;
      }
    },
    enabled: Boolean(id) && !local && page !== undefined,
    retry: false,
  });
  return { letter: local ?? remote.data ?? null, loading: !local && remote.isPending && Boolean(id), missing: !local && remote.data === null };
}

interface Props {
  query: ListQuery<DeadLetterPage>;
  selection: Selection<DeadLetterItem>;
  page: number;
  onPage: (page: number) => void;
  /** The letter inspected (`?letter=<id>`), null for none. */
  letterId: string | null;
  onInspect: (letterId: string | null) => void;
  onBulk: (intent: BulkIntent) => void;
}

/** The letters one by one: the one inspected, bulk actions on those selected, the table. */
export function LettersTab({ query, selection, page, onPage, letterId, onInspect, onBulk }: Props) {
  const inspected = useLetter(letterId, query.data?.items);
  const chosen = selection.chosen;
  return (
    <section aria-label="Letters">
      {letterId ? (
        inspected.letter ? (
          <InspectPanel key={inspected.letter.id} letter={inspected.letter} onClose={() => onInspect(null)} />
        ) : inspected.loading ? (
          <Loading label="Loading the dead letter…" />
        ) : inspected.missing ? (
          <Empty>
            That dead letter is not open (or not yours). <button type="button" className="link" onClick={() => onInspect(null)}>Close</button>
          </Empty>
        ) : null
      ) : null}
      <div className="toolbar" role="region" aria-label="Bulk actions on selected letters">
        <span aria-live="polite">{chosen.length} selected</span>
        {BULK_ACTIONS.map((action) => (
          <button
            key={action}
            type="button"
            disabled={chosen.length === 0}
            onClick={() => onBulk({ action, selector: { ids: chosen.map((l) => l.id) }, description: `${chosen.length} selected letter(s)` })}
          >
            {BULK_VERBS[action]} selected…
          </button>
        ))}
      </div>
      <QueryTable
        query={query}
        loadingLabel="Loading dead letters…"
        empty="No dead letters match."
        tableLabel="Dead letters table"
        pagination={{ page, onPage, label: 'Dead letter pages' }}
        testId="dead-letters-table"
        columns={[{ label: <SelectAllCheckbox selection={selection} label="Select all letters on this page" /> }, ...COLUMNS]}
      >
        {(letter) => (
          <tr key={letter.id} data-testid="dead-letter-row" data-job-id={letter.jobId} data-selected={selection.has(letter.id)}>
            <td>
              <SelectRowCheckbox selection={selection} id={letter.id} label={`Select dead letter of job ${shortId(letter.jobId)}`} />
            </td>
            <td>
              <JobLink jobId={letter.jobId} />
            </td>
            <td>{letter.jobType}</td>
            <td>{letter.reason}</td>
            <td className="truncate" title={letter.lastError ?? undefined}>
              {letter.lastError ?? '—'}
            </td>
            <td className="nowrap">{formatDateTime(letter.createdAt)}</td>
            <td>
              {letter.resolvedAt ? (
                <StatusBadge status="cancelled" label={letter.resolution ?? 'resolved'} />
              ) : (
                <StatusBadge status="dead" label="open" />
              )}
            </td>
            <td>
              <button
                type="button"
                onClick={() => onInspect(letter.id)}
                aria-label={`Inspect dead letter of job ${shortId(letter.jobId)}`}
              >
                Inspect
              </button>
            </td>
          </tr>
        )}
      </QueryTable>
    </section>
  );
}
