import type { DeadLetterParams } from '../../api/endpoints';
import type { BulkSelector, DeadLetterGroups } from '../../api/types';
import { Denied } from '../../components/Denied';
import type { Column } from '../../components/ListTable';
import { QueryTable, type ListQuery } from '../../components/QueryList';
import { BULK_ACTIONS, BULK_VERBS } from '../../lib/deadLetters';
import { formatDateTime } from '../../lib/format';
import { deniedReason, useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useProjectId } from '../../project/navigation';
import type { BulkIntent } from './BulkPanel';

const COLUMNS: readonly Column[] = [
  { label: 'Error fingerprint' },
  { label: 'Letters', className: 'num' },
  { label: 'Reasons' },
  { label: 'First / last' },
  { label: 'Actions' },
];

/** The letters grouped by error fingerprint, an open group with its bulk requeue and discard. */
export function GroupsTab({
  query,
  filters,
  onBulk,
}: {
  query: ListQuery<DeadLetterGroups>;
  filters: DeadLetterParams;
  onBulk: (intent: BulkIntent) => void;
}) {
  const rights = useRights();
  // groups span projects: with all projects chosen, a bulk action touches the letters of the
  // projects where you may act (the API selects them); with one chosen, its role decides
  const bulkShown = useProjectId() === null || rights.act;
  return (
    <section aria-label="Groups">
      {!bulkShown && filters.status === 'open' ? (
        <Denied testId="bulk-groups-denied">{deniedReason(rights, 'act', 'requeueing or discarding dead letters')}</Denied>
      ) : null}
      <QueryTable
        query={query}
        loadingLabel="Loading groups…"
        empty="No dead letters here. Everything ran."
        tableLabel="Dead-letter groups table"
        testId="dead-letter-groups"
        columns={COLUMNS}
      >
        {(group) => {
          const selector: BulkSelector = { fingerprint: group.fingerprint };
          if (filters.jobType) selector.jobType = filters.jobType;
          if (filters.reason) selector.reason = filters.reason;
          return (
            <tr key={group.fingerprint}>
              <td>
                <code style={{ overflowWrap: 'anywhere' }}>{group.fingerprint}</code>
                {group.sampleError ? <div className="muted">{group.sampleError}</div> : null}
              </td>
              <td className="num">{group.count}</td>
              <td>{group.reasons.join(', ')}</td>
              <td className="nowrap">
                {formatDateTime(group.firstAt)}
                <br />
                {formatDateTime(group.lastAt)}
              </td>
              <td>
                <div className="toolbar" style={{ margin: 0 }}>
                  <Link
                    to={`/dead-letters?${new URLSearchParams({ ...(filters.status !== 'open' ? { status: filters.status ?? '' } : {}), tab: 'letters', fingerprint: group.fingerprint }).toString()}`}
                  >
                    Show letters<span className="visually-hidden"> of {group.fingerprint}</span>
                  </Link>
                  {filters.status === 'open' && bulkShown
                    ? BULK_ACTIONS.map((action) => (
                        <button
                          key={action}
                          type="button"
                          onClick={() => onBulk({ action, selector, description: `the group "${group.fingerprint}"` })}
                        >
                          {BULK_VERBS[action]} all<span className="visually-hidden"> {group.count} letters of {group.fingerprint}</span>…
                        </button>
                      ))
                    : null}
                </div>
              </td>
            </tr>
          );
        }}
      </QueryTable>
    </section>
  );
}
