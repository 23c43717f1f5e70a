import { keepPreviousData } from '@tanstack/react-query';
import { useId, useState, type ReactElement } from 'react';
import {
  Area,
  AreaChart,
  Bar,
  BarChart,
  CartesianGrid,
  Legend,
  Line,
  LineChart,
  ResponsiveContainer,
  Tooltip,
  XAxis,
  YAxis,
} from 'recharts';
import { getCharts } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { ChartRange } from '../../api/types';
import { formatNumber } from '../../lib/format';
import { usePollWhileOffline } from '../../live/context';
import { useScopedQuery } from '../../project/useScopedQuery';
import { ListTable, type Column } from '../ListTable';
import { ErrorState, Loading } from '../states';
import { chartRows, hasUtilisation, totals, windowCaption, type ChartRow } from './chartRows';
import { RangePicker } from './RangePicker';

const PRIORITY_LINES = [
  { suffix: 'High', name: 'High (3)', color: '#c0263a', dash: undefined },
  { suffix: 'Medium', name: 'Medium (2)', color: '#8a5a00', dash: '6 3' },
  { suffix: 'Low', name: 'Low (1)', color: '#1f5fbf', dash: '2 3' },
] as const;

const TABLE_COLUMNS: readonly Column[] = [
  { label: 'Window from' },
  { label: 'Succeeded / min', className: 'num' },
  { label: 'Dead / min', className: 'num' },
  { label: 'Waiting (high, medium, low)', className: 'num' },
  { label: 'Longest wait, s (high, medium, low)', className: 'num' },
  { label: 'Busy slots', className: 'num' },
];

const axis = { fontSize: 12 } as const;
const margin = { top: 8, right: 8, bottom: 0, left: -12 } as const;

function ChartCard({ title, label, testId, children }: { title: string; label: string; testId: string; children: ReactElement }) {
  return (
    <figure className="chart-card" data-testid={testId} style={{ margin: 0 }}>
      <figcaption>
        <h3 style={{ margin: '0 0 0.25rem', fontSize: '1rem' }}>{title}</h3>
      </figcaption>
      <div className="chart-box" role="img" aria-label={label}>
        <ResponsiveContainer width="100%" height="100%">
          {children}
        </ResponsiveContainer>
      </div>
    </figure>
  );
}

/** One line per priority of the rows' `${key}High`-style figures (jobs waiting, longest wait). */
function priorityLineChart(
  rows: ChartRow[],
  key: 'waiting' | 'wait',
  yAxis: { allowDecimals?: boolean; unit?: string },
): ReactElement {
  return (
    <LineChart data={rows} margin={margin}>
      <CartesianGrid strokeDasharray="3 3" />
      <XAxis dataKey="label" {...axis} minTickGap={16} />
      <YAxis {...yAxis} {...axis} />
      <Tooltip />
      <Legend />
      {PRIORITY_LINES.map((line) => (
        <Line
          key={line.suffix}
          dataKey={`${key}${line.suffix}`}
          name={line.name}
          stroke={line.color}
          strokeDasharray={line.dash}
          dot={false}
          isAnimationActive={false}
        />
      ))}
    </LineChart>
  );
}

const triple = (a: number | null, b: number | null, c: number | null) =>
  a === null ? '—' : `${formatNumber(a)}, ${formatNumber(b ?? 0)}, ${formatNumber(c ?? 0)}`;

/** The figures as a table, built only once opened (up to 168 rows). */
function ChartTable({ rows }: { rows: readonly ChartRow[] }) {
  const [open, setOpen] = useState(false);
  return (
    <details onToggle={(event) => setOpen(event.currentTarget.open)}>
      <summary>Show as table</summary>
      {open ? (
        <ListTable caption="The charts' figures per window" hiddenCaption columns={TABLE_COLUMNS} rows={rows}>
          {(row) => (
            <tr key={row.start}>
              <td>{row.label}</td>
              <td className="num">{row.succeededPerMinute}</td>
              <td className="num">{row.deadPerMinute}</td>
              <td className="num">{triple(row.waitingHigh, row.waitingMedium, row.waitingLow)}</td>
              <td className="num">{triple(row.waitHigh, row.waitMedium, row.waitLow)}</td>
              <td className="num">{row.busySlots === null ? '—' : `${row.busySlots} of ${row.slots ?? 0}`}</td>
            </tr>
          )}
        </ListTable>
      ) : null}
    </details>
  );
}

interface Props {
  title: string;
  /** One queue's charts (its id); every visible queue's when absent. */
  queueId?: string;
  initialRange?: ChartRange;
}

/**
 * Charts over a chosen range (15 min to 7 days), from the chart rollups: throughput and failures
 * per minute, queue depth and longest wait by priority, and (admins, whole platform) the workers'
 * utilisation; with links to Grafana and (admins) the RabbitMQ console where they are configured.
 */
export function ChartsPanel({ title, queueId, initialRange = '1h' }: Props) {
  const id = useId();
  const [range, setRange] = useState<ChartRange>(initialRange);
  const poll = usePollWhileOffline(30_000);
  const charts = useScopedQuery({
    queryKey: queryKeys.charts(range, queueId ?? null),
    queryFn: ({ signal }) => getCharts(range, queueId, signal),
    // the windows move with the clock even without events
    refetchInterval: poll === false ? 60_000 : poll,
    placeholderData: keepPreviousData,
  });
  const series = charts.data;
  const rows = series ? chartRows(series) : [];
  const sums = series ? totals(series) : null;
  const fleet = hasUtilisation(rows);
  const shown = series && series.range === range;

  return (
    <section className="card" aria-labelledby={`${id}-heading`} data-testid="charts-panel">
      <div className="toolbar" style={{ justifyContent: 'space-between', alignItems: 'flex-start' }}>
        <h2 id={`${id}-heading`} style={{ margin: 0 }}>
          {title}
        </h2>
        <RangePicker name={`${id}-range`} value={range} onChange={setRange} />
      </div>
      {charts.isPending ? <Loading label="Loading charts…" /> : null}
      {charts.isError ? <ErrorState error={charts.error} onRetry={() => void charts.refetch()} /> : null}
      {series && sums ? (
        <>
          <p
            className="muted"
            data-testid="charts-window"
            data-range={series.range}
            data-points={series.points.length}
            data-bucket-seconds={series.bucketSeconds}
            aria-live="polite"
            aria-busy={!shown}
          >
            {windowCaption(series)}
          </p>
          <div className="grid grid-2">
            <ChartCard
              title="Throughput and failures per minute"
              testId="chart-throughput"
              label={`Bar chart, jobs finished per minute: ${formatNumber(sums.succeeded)} succeeded, ${formatNumber(sums.dead)} dead, ${formatNumber(sums.cancelled)} cancelled in the range`}
            >
              <BarChart data={rows} margin={margin}>
                <CartesianGrid strokeDasharray="3 3" />
                <XAxis dataKey="label" {...axis} minTickGap={16} />
                <YAxis allowDecimals {...axis} />
                <Tooltip />
                <Legend />
                <Bar dataKey="succeededPerMinute" name="Succeeded" stackId="f" fill="#1f8a3b" isAnimationActive={false} />
                <Bar dataKey="deadPerMinute" name="Dead (failed)" stackId="f" fill="#c0263a" isAnimationActive={false} />
                <Bar dataKey="cancelledPerMinute" name="Cancelled" stackId="f" fill="#6b7280" isAnimationActive={false} />
              </BarChart>
            </ChartCard>
            <ChartCard
              title="Jobs waiting by priority"
              testId="chart-depth"
              label="Line chart: jobs waiting per priority, the mean of each window's minute samples"
            >
              {priorityLineChart(rows, 'waiting', { allowDecimals: false })}
            </ChartCard>
            <ChartCard
              title="Longest wait by priority"
              testId="chart-wait"
              label="Line chart: seconds the oldest queued job had waited, per priority"
            >
              {priorityLineChart(rows, 'wait', { unit: ' s' })}
            </ChartCard>
            {fleet ? (
              <ChartCard
                title="Worker utilisation"
                testId="chart-utilisation"
                label="Area chart: the live workers' busy slots as a share of all their slots"
              >
                <AreaChart data={rows} margin={margin}>
                  <CartesianGrid strokeDasharray="3 3" />
                  <XAxis dataKey="label" {...axis} minTickGap={16} />
                  <YAxis unit=" %" domain={[0, 100]} {...axis} />
                  <Tooltip />
                  <Area
                    dataKey="utilisation"
                    name="Busy slots (%)"
                    stroke="#1f5fbf"
                    fill="#93b4e0"
                    isAnimationActive={false}
                  />
                </AreaChart>
              </ChartCard>
            ) : null}
          </div>
          <ChartTable rows={rows} />
          {series.grafanaUrl || series.rabbitmqConsoleUrl ? (
            <p className="toolbar" data-testid="charts-links">
              {series.grafanaUrl ? (
                <a href={series.grafanaUrl} target="_blank" rel="noreferrer">
                  View in Grafana
                </a>
              ) : null}
              {series.rabbitmqConsoleUrl ? (
                <a href={series.rabbitmqConsoleUrl} target="_blank" rel="noreferrer">
                  RabbitMQ console
                </a>
              ) : null}
            </p>
          ) : null}
        </>
      ) : null}
    </section>
  );
}
