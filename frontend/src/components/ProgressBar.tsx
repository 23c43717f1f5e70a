export interface ProgressSegment {
  value: number;
  tone: 'ok' | 'bad' | 'neutral' | 'primary';
  label: string;
}

interface Props {
  label: string;
  value: number;
  max: number;
  /** Optional split of `value` into coloured parts (each also named in the text). */
  segments?: ProgressSegment[];
  detail?: string;
}

export function ProgressBar({ label, value, max, segments, detail }: Props) {
  const safeMax = Math.max(max, 0);
  const pct = safeMax === 0 ? 0 : Math.min(100, Math.round((value / safeMax) * 100));
  const parts = segments ?? [{ value, tone: 'primary', label }];
  const text = detail ?? `${value} of ${safeMax} (${pct} %)`;
  return (
    <div className="progress">
      <div
        role="progressbar"
        aria-label={label}
        aria-valuemin={0}
        aria-valuemax={safeMax}
        aria-valuenow={Math.min(value, safeMax)}
        aria-valuetext={text}
        className="progress-track"
      >
        {parts.map((part) =>
          part.value > 0 && safeMax > 0 ? (
            <div
              key={part.label}
              className={`progress-fill ${part.tone === 'primary' ? '' : part.tone}`}
              style={{ width: `${(part.value / safeMax) * 100}%` }}
            />
          ) : null,
        )}
      </div>
      <span className="progress-label">
        {label}: {text}
      </span>
    </div>
  );
}
