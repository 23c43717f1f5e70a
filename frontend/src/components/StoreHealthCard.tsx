import { getStoreHealth } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';
import type { StoreHealth } from '../api/types';
import { useIsAdmin } from '../auth/hooks';
import { formatDateTime, formatNumber, formatPercent } from '../lib/format';
import { useScopedQuery } from '../project/useScopedQuery';
import { ListTable, type Column } from './ListTable';
import { ErrorState } from './states';

/** The catalog's statistics move slowly and no live event carries them. */
const POLL_MS = 60_000;

const TABLE_COLUMNS: readonly Column[] = [
  { label: 'Table' },
  { label: 'Dead rows', className: 'num' },
  { label: 'Live rows', className: 'num' },
  { label: 'Autovacuum' },
  { label: 'Last vacuum' },
  { label: 'Last analyze' },
];

function Summary({ health }: { health: StoreHealth }) {
  const dead = health.tables.reduce((n, t) => n + t.deadRows, 0);
  const most = health.tables[0];
  return (
    <p style={{ margin: 0 }}>
      Autovacuum is <strong data-testid="store-autovacuum">{health.autovacuum ? 'on' : 'off'}</strong> for the server;{' '}
      {formatNumber(dead)} dead rows in the job store
      {most && most.deadRows > 0 ? `, most in ${most.table} (${formatNumber(most.deadRows)})` : ''}. A table is warned about
      from {formatNumber(health.threshold.deadRows)} dead rows when they are over{' '}
      {formatPercent(health.threshold.deadRatio)} of its live ones.
    </p>
  );
}

/**
 * The job store's vacuum health, for admins (GET /api/store/health): a warning card when
 * autovacuum is off, for the server or a table, or a table holds more dead rows than the
 * threshold; else one quiet line. Nothing for other users.
 */
export function StoreHealthCard() {
  const isAdmin = useIsAdmin();
  const health = useScopedQuery({
    queryKey: queryKeys.storeHealth,
    queryFn: ({ signal }) => getStoreHealth(signal),
    refetchInterval: POLL_MS,
    enabled: isAdmin,
  });
  if (!isAdmin) return null;
  const data = health.data;
  const warn = data?.verdict === 'warning';
  return (
    <section
      className={warn ? 'card card-warn' : 'card'}
      aria-labelledby="store-health-heading"
      data-testid="store-health"
      data-verdict={data?.verdict}
    >
      <h2 id="store-health-heading">{!data ? 'Job store' : warn ? 'Job store needs attention' : 'Job store is healthy'}</h2>
      {health.isError ? <ErrorState error={health.error} onRetry={() => void health.refetch()} /> : null}
      {data ? (
        <>
          {data.warnings.length > 0 ? (
            <ul data-testid="store-warnings">
              {data.warnings.map((warning) => (
                <li key={warning.code} data-code={warning.code}>
                  {warning.message}
                </li>
              ))}
            </ul>
          ) : null}
          <Summary health={data} />
          <details>
            <summary>Tables ({data.tables.length}), read {formatDateTime(data.checkedAt)}</summary>
            <ListTable caption="Job store tables, most dead rows first" hiddenCaption columns={TABLE_COLUMNS} rows={data.tables}>
              {(table) => (
                <tr key={table.table} data-over-threshold={table.overThreshold}>
                  <td className="mono">{table.table}</td>
                  <td className={table.overThreshold ? 'num warn-text' : 'num'}>{formatNumber(table.deadRows)}</td>
                  <td className="num">{formatNumber(table.liveRows)}</td>
                  <td>{table.autovacuum ? 'on' : 'off'}</td>
                  <td>{table.lastVacuumAt ? formatDateTime(table.lastVacuumAt) : 'never'}</td>
                  <td>{table.lastAnalyzeAt ? formatDateTime(table.lastAnalyzeAt) : 'never'}</td>
                </tr>
              )}
            </ListTable>
          </details>
        </>
      ) : null}
    </section>
  );
}
