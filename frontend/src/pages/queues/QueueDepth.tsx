import type { QueueDepthEntry, QueueHistory } from '../../api/types';
import { Sparkline } from '../../components/Sparkline';
import { formatNumber } from '../../lib/format';
import { depthRows, historySummary, PRIORITY_COLUMNS } from '../../lib/queueDepth';

/** The colours and dashes of the last hour's lines, shared by the sparklines and their key. */
export const WAITING_LINE = { color: '#2f6db5', dash: undefined } as const;
export const RUNNING_LINE = { color: '#1f8a3b', dash: '3 2' } as const;

/** A queue's unfinished jobs now as a small table: a row per status it has jobs in, a column per priority. */
export function DepthTable({ name, depth }: { name: string; depth: readonly QueueDepthEntry[] }) {
  const rows = depthRows(depth);
  if (rows.length === 0) {
    return <span className="muted">nothing unfinished</span>;
  }
  return (
    // named by aria-label, not a visually hidden caption: an absolutely positioned caption would
    // escape the scrolling table region and widen the page on a phone
    <table className="depth-table" data-testid="queue-depth-table" aria-label={`Unfinished jobs of ${name} by state and priority`}>
      <thead>
        <tr>
          <th scope="col">State</th>
          {PRIORITY_COLUMNS.map((c) => (
            <th key={c.priority} scope="col" className="num">
              {c.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>
        {rows.map((row) => (
          <tr key={row.status} data-status={row.status}>
            <th scope="row">{row.status}</th>
            {PRIORITY_COLUMNS.map((c) => {
              const count = row.counts[c.priority] ?? 0;
              return (
                <td key={c.priority} className="num" data-priority={c.priority}>
                  {count > 0 ? formatNumber(count) : <span className="muted">0</span>}
                </td>
              );
            })}
          </tr>
        ))}
      </tbody>
    </table>
  );
}

/** The key of the last hour's lines, once above the table. */
export function HistoryKey() {
  const swatch = (line: { color: string; dash: string | undefined }) => (
    <svg width={18} height={8} aria-hidden="true" focusable="false" style={{ verticalAlign: 'middle' }}>
      <line x1={1} x2={17} y1={4} y2={4} stroke={line.color} strokeWidth={2} strokeDasharray={line.dash} />
    </svg>
  );
  return (
    <p className="muted" data-testid="queue-history-key">
      Last hour, per minute (sampled once a minute): {swatch(WAITING_LINE)} waiting (solid line), {swatch(RUNNING_LINE)}{' '}
      running (dashed line).
    </p>
  );
}

/** A queue's last hour: waiting and running per minute, or why there is none. */
export function QueueSparkline({ name, history }: { name: string; history: QueueHistory | undefined }) {
  if (!history) return <span className="muted">—</span>;
  return (
    <Sparkline
      testId="queue-history"
      label={historySummary(name, history.waiting, history.running)}
      series={[
        { key: 'waiting', values: history.waiting, ...WAITING_LINE },
        { key: 'running', values: history.running, ...RUNNING_LINE },
      ]}
    />
  );
}
