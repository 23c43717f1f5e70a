import { isApiError } from '../../api/client';
import { getDeadLetter } from '../../api/endpoints';
import type { DeadLetterItem, DeadLetterPage } from '../../api/types';
import { Denied } from '../../components/Denied';
import { JobLink } from '../../components/JobLink';
import type { Column } from '../../components/ListTable';
import { QueryTable, type ListQuery } from '../../components/QueryList';
import { SelectAllCheckbox, SelectRowCheckbox } from '../../components/SelectCheckbox';
import { StatusBadge } from '../../components/StatusBadge';
import { Empty, Loading } from '../../components/states';
import { BULK_ACTIONS, BULK_VERBS } from '../../lib/deadLetters';
import { formatDateTime, shortId } from '../../lib/format';
import type { Selection } from '../../lib/useSelection';
import { deniedReason, rightsIn, useProjectAccess, useRights } from '../../project/access';
import { useProjectId } from '../../project/navigation';
import { useScopedQuery } from '../../project/useScopedQuery';
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
  const remote = useScopedQuery({
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
  const access = useProjectAccess();
  const rights = useRights();
  // with one project chosen its role decides; with all, each selected letter's project
  const bulkShown = useProjectId() === null || rights.act;
  const chosen = selection.chosen.filter((letter) => rightsIn(access, letter.projectId).act);
  const leftOut = selection.chosen.length - chosen.length;
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
      {bulkShown ? (
        <div className="toolbar" role="region" aria-label="Bulk actions on selected letters">
          <span aria-live="polite">
            {selection.chosen.length} selected
            {leftOut > 0 ? `, ${leftOut} in projects where your role may not requeue or discard (left out)` : ''}
          </span>
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
      ) : (
        <Denied testId="bulk-letters-denied">{deniedReason(rights, 'act', 'requeueing or discarding dead letters')}</Denied>
      )}
      <QueryTable
        query={query}
        loadingLabel="Loading dead letters…"
        empty="No dead letters match."
        tableLabel="Dead letters table"
        pagination={{ page, onPage, label: 'Dead letter pages' }}
        testId="dead-letters-table"
        columns={
          bulkShown
            ? [{ label: <SelectAllCheckbox selection={selection} label="Select all letters on this page" /> }, ...COLUMNS]
            : COLUMNS
        }
      >
        {(letter) => (
          <tr key={letter.id} data-testid="dead-letter-row" data-job-id={letter.jobId} data-selected={selection.has(letter.id)}>
            {bulkShown ? (
              <td>
                <SelectRowCheckbox selection={selection} id={letter.id} label={`Select dead letter of job ${shortId(letter.jobId)}`} />
              </td>
            ) : null}
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
