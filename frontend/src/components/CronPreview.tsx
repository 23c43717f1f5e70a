import { useMemo } from 'react';
import { browserTimeZone, nextFireTimes } from '../lib/cron';
import { formatInZone } from '../lib/format';

/** The next fire times of a cron expression in a zone (and in the browser's zone). */
export function CronPreview({ cron, timeZone, count = 5, now }: { cron: string; timeZone: string; count?: number; now?: Date }) {
  const result = useMemo(() => {
    try {
      return { times: nextFireTimes(cron, timeZone, count, now ?? new Date()), error: null };
    } catch (error) {
      return { times: [] as Date[], error: error instanceof Error ? error.message : String(error) };
    }
  }, [cron, timeZone, count, now]);
  const local = browserTimeZone();
  return (
    <div aria-live="polite" data-testid="cron-preview">
      <h3 id="cron-preview-heading">Next {count} fire times</h3>
      {result.error ? (
        <p className="muted">{result.error}</p>
      ) : (
        <ol aria-labelledby="cron-preview-heading">
          {result.times.map((time) => (
            <li key={time.toISOString()} data-fire-time={time.toISOString()}>
              <time dateTime={time.toISOString()}>{formatInZone(time, timeZone)}</time>
              {local !== timeZone ? <span className="muted"> · {formatInZone(time, local)} your time</span> : null}
            </li>
          ))}
        </ol>
      )}
      <p className="muted" style={{ fontSize: '0.8rem' }}>
        Computed in your browser. Around daylight-saving changes the scheduler may differ: a skipped
        time fires at the first instant after the gap, a repeated time fires at both.
      </p>
    </div>
  );
}
