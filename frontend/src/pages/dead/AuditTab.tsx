import type { DeadLetterActionPage } from '../../api/types';
import { JobLink } from '../../components/JobLink';
import type { Column } from '../../components/ListTable';
import { QueryTable, type ListQuery } from '../../components/QueryList';
import { formatDateTime } from '../../lib/format';

const COLUMNS: readonly Column[] = [
  { label: 'When' },
  { label: 'Action' },
  { label: 'By' },
  { label: 'Job' },
  { label: 'Affected', className: 'num' },
  { label: 'Selector' },
  { label: 'Reason' },
];

/** The requeues and discards done so far, newest first. */
export function AuditTab({
  query,
  page,
  onPage,
}: {
  query: ListQuery<DeadLetterActionPage>;
  page: number;
  onPage: (page: number) => void;
}) {
  return (
    <section aria-label="Audit log">
      <QueryTable
        query={query}
        loadingLabel="Loading the audit log…"
        empty="No requeues or discards yet."
        tableLabel="Audit log table"
        pagination={{ page, onPage, label: 'Audit log pages' }}
        testId="dead-letter-audit"
        columns={COLUMNS}
      >
        {(action) => (
          <tr key={action.id}>
            <td className="nowrap">{formatDateTime(action.at)}</td>
            <td>{action.action}</td>
            <td>{action.actor}</td>
            <td>{action.jobId ? <JobLink jobId={action.jobId} /> : '—'}</td>
            <td className="num">{action.affected}</td>
            <td className="wrap">{action.selector ? <code>{JSON.stringify(action.selector)}</code> : '—'}</td>
            <td className="wrap">{action.reason ?? '—'}</td>
          </tr>
        )}
      </QueryTable>
    </section>
  );
}
