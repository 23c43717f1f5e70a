import { useEffect, useMemo, useRef, useState } from 'react';
import { getJobLogs } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { LogLine } from '../../api/types';
import { ErrorState, Loading } from '../../components/states';
import { mergeLines } from '../../lib/logs';
import { useJobLogStream, useLiveStatus } from '../../live/context';
import type { LiveLogLine } from '../../live/protocol';
import { useScopedQuery } from '../../project/useScopedQuery';

const PAGE = 500;
const MAX_PAGES = 20;

async function fetchAllLogs(jobId: string, signal: AbortSignal): Promise<LogLine[]> {
  const lines: LogLine[] = [];
  let afterId = 0;
  for (let page = 0; page < MAX_PAGES; page++) {
    const answer = await getJobLogs(jobId, afterId, PAGE, signal);
    lines.push(...answer.items);
    if (answer.items.length < PAGE) break;
    afterId = answer.nextAfterId;
  }
  return lines;
}

const timeFormat = new Intl.DateTimeFormat(undefined, {
  hour: '2-digit',
  minute: '2-digit',
  second: '2-digit',
  fractionalSecondDigits: 3,
});

/** The job's log: what is stored, then new lines live over the socket while the job runs. */
export function LogTail({ jobId, running }: { jobId: string; running: boolean }) {
  const liveStatus = useLiveStatus();
  const [live, setLive] = useState<LiveLogLine[]>([]);
  const [follow, setFollow] = useState(true);
  const box = useRef<HTMLDivElement>(null);

  useJobLogStream(jobId, running, (lines) => setLive((current) => [...current, ...lines].slice(-5_000)));

  const stored = useScopedQuery({
    queryKey: queryKeys.jobLogs(jobId),
    queryFn: ({ signal }) => fetchAllLogs(jobId, signal),
    // the socket brings new lines; poll only while it is down and the job still runs
    refetchInterval: running && liveStatus !== 'live' ? 2_000 : false,
  });

  const lines = useMemo(() => mergeLines(stored.data ?? [], live), [stored.data, live]);

  useEffect(() => {
    if (follow && box.current) box.current.scrollTop = box.current.scrollHeight;
  }, [lines, follow]);

  return (
    <section className="card" aria-labelledby="logs-heading">
      <div className="page-header">
        <h2 id="logs-heading" style={{ marginTop: 0 }}>
          Logs
        </h2>
        <label className="check">
          <input type="checkbox" checked={follow} onChange={(e) => setFollow(e.target.checked)} />
          Follow new lines
        </label>
      </div>
      {running ? (
        <p className="muted" data-testid="log-tail-mode">
          {liveStatus === 'live' ? 'Live: new lines appear as the worker writes them.' : 'Refreshing every 2 s (no live connection).'}
        </p>
      ) : null}
      {stored.isPending ? <Loading label="Loading logs…" /> : null}
      {stored.isError ? <ErrorState error={stored.error} onRetry={() => void stored.refetch()} /> : null}
      {stored.data && lines.length === 0 ? <p className="muted">No log lines yet.</p> : null}
      {lines.length > 0 ? (
        <div className="log" role="log" aria-label="Job log lines" ref={box} tabIndex={0} data-testid="job-logs">
          <ol>
          {lines.map((line) => (
            <li key={line.key} className={`lvl-${line.level}`}>
              <time dateTime={line.at}>{timeFormat.format(new Date(line.at))}</time> #{line.attempt}{' '}
              <strong>{line.level.toUpperCase()}</strong> {line.message}
            </li>
          ))}
          </ol>
        </div>
      ) : null}
    </section>
  );
}
