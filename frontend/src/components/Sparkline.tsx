import { sparkPath } from '../lib/queueDepth';

/** One line of a sparkline: its values (null: unknown, a gap), colour and dash pattern. */
export interface SparkSeries {
  key: string;
  values: readonly (number | null)[];
  color: string;
  /** SVG stroke-dasharray; a dashed line tells the series apart without colour. */
  dash?: string;
}

interface Props {
  series: readonly SparkSeries[];
  /** The text alternative: what the lines show, in words. */
  label: string;
  width?: number;
  height?: number;
  testId?: string;
}

/**
 * A small line chart without axes (a queue's last hour), drawn on one scale from 0 to the
 * largest value. It is an image named by `label`; the SVG itself is hidden from assistive
 * technology.
 */
export function Sparkline({ series, label, width = 120, height = 32, testId }: Props) {
  const max = Math.max(1, ...series.flatMap((s) => s.values.map((v) => v ?? 0)));
  const pad = 2; // room for the stroke at the top and the bottom
  return (
    <div role="img" aria-label={label} data-testid={testId} className="sparkline">
      <svg width={width} height={height} viewBox={`0 ${-pad} ${width} ${height + 2 * pad}`} aria-hidden="true" focusable="false">
        <line x1={0} x2={width} y1={height} y2={height} stroke="#d0d5dc" strokeWidth={1} />
        {series.map((s) => (
          <path
            key={s.key}
            d={sparkPath(s.values, max, width, height)}
            fill="none"
            stroke={s.color}
            strokeWidth={1.75}
            strokeDasharray={s.dash}
            strokeLinejoin="round"
            strokeLinecap="round"
            data-series={s.key}
          />
        ))}
      </svg>
    </div>
  );
}
