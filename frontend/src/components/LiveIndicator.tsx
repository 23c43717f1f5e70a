import type { LiveStatus } from '../live/connection';
import { useLiveStatus } from '../live/context';

const TEXT: Record<LiveStatus, { label: string; title: string }> = {
  idle: { label: 'Offline', title: 'Not connected' },
  connecting: { label: 'Connecting…', title: 'Opening the live connection' },
  live: { label: 'Live', title: 'Live updates are on' },
  reconnecting: { label: 'Reconnecting…', title: 'Live connection lost; reconnecting. Pages poll meanwhile.' },
  offline: { label: 'Offline · polling', title: 'No live connection; pages refresh by polling' },
};

export function LiveIndicator() {
  const status = useLiveStatus();
  const text = TEXT[status];
  return (
    <span
      className={`live-indicator live-${status}`}
      role="status"
      aria-live="polite"
      title={text.title}
      data-testid="live-status"
      data-live-status={status}
    >
      <span className="live-dot" aria-hidden="true" />
      <span>
        <span className="visually-hidden">Live updates: </span>
        {text.label}
      </span>
    </span>
  );
}
