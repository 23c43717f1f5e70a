/**
 * The charts' rows from a range's series (GET /api/jobs/analytics/charts): finishes as a rate per
 * minute (a window wider than a minute shows its mean), depths and waits by priority, and the
 * workers' utilisation as a share of their slots. Unsampled windows stay null: a gap, not a zero.
 */
import type { ChartRange, ChartSeries } from '../../api/types';

export const CHART_RANGES: readonly { value: ChartRange; label: string }[] = [
  { value: '15m', label: '15 min' },
  { value: '1h', label: '1 hour' },
  { value: '6h', label: '6 hours' },
  { value: '24h', label: '24 hours' },
  { value: '7d', label: '7 days' },
];

export interface ChartRow {
  start: string;
  /** The window's start as the axis shows it. */
  label: string;
  succeededPerMinute: number;
  deadPerMinute: number;
  cancelledPerMinute: number;
  waitingHigh: number | null;
  waitingMedium: number | null;
  waitingLow: number | null;
  running: number | null;
  waitHigh: number | null;
  waitMedium: number | null;
  waitLow: number | null;
  /** Busy slots over all slots, in percent; null for non-admins and unsampled windows. */
  utilisation: number | null;
  busySlots: number | null;
  slots: number | null;
}

const round = (value: number, digits = 2) => Math.round(value * 10 ** digits) / 10 ** digits;

function timeFormat(bucketSeconds: number): Intl.DateTimeFormat {
  return bucketSeconds >= 3_600
    ? new Intl.DateTimeFormat(undefined, { weekday: 'short', hour: '2-digit', minute: '2-digit' })
    : new Intl.DateTimeFormat(undefined, { hour: '2-digit', minute: '2-digit' });
}

export function chartRows(series: ChartSeries): ChartRow[] {
  const minutes = series.bucketSeconds / 60;
  const time = timeFormat(series.bucketSeconds);
  return series.points.map((point) => ({
    start: point.start,
    label: time.format(new Date(point.start)),
    succeededPerMinute: round(point.succeeded / minutes),
    deadPerMinute: round(point.dead / minutes),
    cancelledPerMinute: round(point.cancelled / minutes),
    waitingHigh: point.waiting ? round(point.waiting.high) : null,
    waitingMedium: point.waiting ? round(point.waiting.medium) : null,
    waitingLow: point.waiting ? round(point.waiting.low) : null,
    running: point.running === null ? null : round(point.running),
    waitHigh: point.longestWaitSeconds ? round(point.longestWaitSeconds.high, 1) : null,
    waitMedium: point.longestWaitSeconds ? round(point.longestWaitSeconds.medium, 1) : null,
    waitLow: point.longestWaitSeconds ? round(point.longestWaitSeconds.low, 1) : null,
    utilisation:
      point.busySlots === null || point.slots === null || point.slots === 0
        ? null
        : round((point.busySlots / point.slots) * 100, 1),
    busySlots: point.busySlots === null ? null : round(point.busySlots),
    slots: point.slots === null ? null : round(point.slots),
  }));
}

/** "a point per minute", "a point per 15 minutes", "a point per hour". */
export function stepLabel(bucketSeconds: number): string {
  if (bucketSeconds === 60) return 'a point per minute';
  if (bucketSeconds === 3_600) return 'a point per hour';
  return `a point per ${bucketSeconds / 60} minutes`;
}

/** The window the charts cover, in words: "From 14:05 to 15:05, a point per minute". */
export function windowCaption(series: ChartSeries): string {
  const last = series.points[series.points.length - 1];
  if (!last) return 'No data';
  const end = new Date(new Date(last.start).getTime() + series.bucketSeconds * 1_000);
  const wide = series.bucketSeconds >= 900;
  const format = new Intl.DateTimeFormat(
    undefined,
    wide ? { weekday: 'short', hour: '2-digit', minute: '2-digit' } : { hour: '2-digit', minute: '2-digit' },
  );
  return `From ${format.format(new Date(series.first))} to ${format.format(end)}, ${stepLabel(series.bucketSeconds)}`;
}

/** Whether the workers' utilisation was sampled in any window (admins' platform-wide view). */
export function hasUtilisation(rows: readonly ChartRow[]): boolean {
  return rows.some((row) => row.utilisation !== null);
}

/** The totals a chart's text alternative names. */
export function totals(series: ChartSeries): { succeeded: number; dead: number; cancelled: number } {
  return series.points.reduce(
    (sum, p) => ({ succeeded: sum.succeeded + p.succeeded, dead: sum.dead + p.dead, cancelled: sum.cancelled + p.cancelled }),
    { succeeded: 0, dead: 0, cancelled: 0 },
  );
}
