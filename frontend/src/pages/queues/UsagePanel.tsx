import { keepPreviousData } from '@tanstack/react-query';
import { useState } from 'react';
import { Bar, BarChart, CartesianGrid, Legend, ResponsiveContainer, Tooltip, XAxis, YAxis } from 'recharts';
import { getUsage } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { UsageTotals } from '../../api/types';
import { ListTable, type Column } from '../../components/ListTable';
import { Stat } from '../../components/Stat';
import { TableRegion } from '../../components/TableRegion';
import { ErrorState, Loading } from '../../components/states';
import { formatNumber } from '../../lib/format';
import {
  DEFAULT_USAGE_RANGE,
  fillUsageDays,
  formatDay,
  formatRunTime,
  formatShortDay,
  USAGE_RANGES,
  usageRange,
  type UsagePoint,
  type UsageRange,
} from '../../lib/usage';
import { usePollWhileOffline } from '../../live/context';
import { useProjectId } from '../../project/navigation';
import { useScopedQuery } from '../../project/useScopedQuery';

const DAY_COLUMNS: readonly Column[] = [
  { label: 'Day (UTC)' },
  { label: 'Submitted', className: 'num' },
  { label: 'Attempts', className: 'num' },
  { label: 'Run time', className: 'num' },
  { label: 'Succeeded', className: 'num' },
  { label: 'Dead', className: 'num' },
];

function Totals({ totals }: { totals: UsageTotals }) {
  return (
    <dl className="grid grid-stats" data-testid="usage-totals">
      <Stat label="Jobs submitted" value={formatNumber(totals.submitted)} testId="usage-submitted" />
      <Stat label="Attempts" value={formatNumber(totals.attempts)} testId="usage-attempts" />
      <Stat label="Run time" value={formatRunTime(totals.runSeconds)} testId="usage-run-time" />
      <Stat label="Succeeded" value={formatNumber(totals.succeeded)} testId="usage-succeeded" />
      <Stat label="Dead" value={formatNumber(totals.dead)} testId="usage-dead" />
    </dl>
  );
}

/** The daily chart (submitted, succeeded, dead) and the same days as a table. */
function DailyChart({ points, totals }: { points: UsagePoint[]; totals: UsageTotals }) {
  const data = points.map((point) => ({ ...point, label: formatShortDay(point.day) }));
  return (
    <>
      <div
        className="chart-box"
        role="img"
        data-testid="usage-chart"
        aria-label={`Bar chart: ${totals.submitted} submitted, ${totals.succeeded} succeeded, ${totals.dead} dead in ${points.length} days`}
        aria-describedby="usage-desc"
      >
        <ResponsiveContainer width="100%" height="100%">
          <BarChart data={data} margin={{ top: 8, right: 8, bottom: 0, left: -16 }}>
            <CartesianGrid strokeDasharray="3 3" />
            <XAxis dataKey="label" fontSize={12} minTickGap={12} />
            <YAxis allowDecimals={false} fontSize={12} />
            <Tooltip />
            <Legend />
            <Bar dataKey="submitted" name="Submitted" fill="#2f6db5" />
            <Bar dataKey="succeeded" name="Succeeded" fill="#1f8a3b" />
            <Bar dataKey="dead" name="Dead" fill="#c0263a" />
          </BarChart>
        </ResponsiveContainer>
      </div>
      <details>
        <summary>Show as table</summary>
        <TableRegion label="Usage per day">
          <ListTable caption="Usage per UTC day" hiddenCaption columns={DAY_COLUMNS} rows={points} testId="usage-table">
            {(point) => (
              <tr key={point.day} data-day={point.day}>
                <th scope="row" className="nowrap">
                  {formatDay(point.day)}
                </th>
                <td className="num">{formatNumber(point.submitted)}</td>
                <td className="num">{formatNumber(point.attempts)}</td>
                <td className="num nowrap">{formatRunTime(point.runSeconds)}</td>
                <td className="num">{formatNumber(point.succeeded)}</td>
                <td className="num">{formatNumber(point.dead)}</td>
              </tr>
            )}
          </ListTable>
        </TableRegion>
      </details>
    </>
  );
}

/** The chosen project's usage over the range picked. */
function ProjectUsage({ projectId }: { projectId: string }) {
  const [range, setRange] = useState<UsageRange>(DEFAULT_USAGE_RANGE);
  // the range ends today (UTC): it moves on at midnight with the next read
  const { from, to } = usageRange(range);
  const poll = usePollWhileOffline(5_000);
  const usage = useScopedQuery({
    queryKey: queryKeys.usage(projectId, from, to),
    queryFn: ({ signal }) => getUsage({ projectId, from, to }, signal),
    // the previous range stays in sight while the new one loads
    placeholderData: keepPreviousData,
    // usage is folded every 2 s and comes with no event: read again on the page's cadence
    refetchInterval: poll === false ? 15_000 : poll,
  });
  const data = usage.data;
  // the API lists only days with activity: the others are zeros
  const points = data ? fillUsageDays(data.firstDay, data.lastDay, data.items) : [];
  return (
    <>
      <fieldset>
        <legend>Range</legend>
        <div className="radio-row">
          {USAGE_RANGES.map((days) => (
            <label key={days} className="check">
              <input
                type="radio"
                name="usage-range"
                value={days}
                checked={range === days}
                onChange={() => setRange(days)}
              />
              Last {days} days
            </label>
          ))}
        </div>
      </fieldset>
      {usage.isPending ? <Loading label="Loading the project's usage…" /> : null}
      {usage.isError ? (
        <ErrorState error={usage.error} title="Could not load the project's usage" onRetry={() => void usage.refetch()} />
      ) : null}
      {data ? (
        <div aria-busy={usage.isPlaceholderData} data-testid="usage-range" data-from={data.firstDay} data-to={data.lastDay}>
          <p className="muted" id="usage-desc">
            Per UTC day, {formatDay(data.firstDay)} to {formatDay(data.lastDay)}: jobs submitted, and jobs that succeeded or went
            dead.
          </p>
          <Totals totals={data.totals} />
          {data.items.length === 0 ? (
            <p className="state" data-testid="usage-empty">
              No jobs submitted or run in these {points.length} days.
            </p>
          ) : (
            <DailyChart points={points} totals={data.totals} />
          )}
        </div>
      ) : null}
    </>
  );
}

/**
 * The chosen project's usage per UTC day (GET /api/usage): the range's totals and a daily
 * chart, with the same days as a table.
 */
export function UsagePanel() {
  const projectId = useProjectId();
  return (
    <section className="card" aria-labelledby="usage-heading" data-testid="usage">
      <h2 id="usage-heading">Usage</h2>
      {projectId ? (
        <ProjectUsage key={projectId} projectId={projectId} />
      ) : (
        <p className="muted" data-testid="usage-choose">
          With all projects shown, choose one (Project, at the top) to see its usage.
        </p>
      )}
    </section>
  );
}
