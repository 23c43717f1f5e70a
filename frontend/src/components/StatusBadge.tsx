/** A glyph per status so colour is never the only signal (the text is always shown too). */
const GLYPHS: Record<string, string> = {
  pending: '○',
  blocked: '⊘',
  scheduled: '◷',
  queued: '…',
  running: '▶',
  failed: '!',
  succeeded: '✓',
  dead: '✕',
  cancelled: '–',
  alive: '●',
  stopping: '◐',
  quiet: '◑',
  unknown: '?',
  paused: '❚❚',
  active: '▶',
};

export function StatusBadge({ status, label }: { status: string | null; label?: string }) {
  const value = status ?? 'unknown';
  return (
    <span className={`badge badge-${value}`} data-status={value}>
      <span aria-hidden="true">{GLYPHS[value] ?? '?'}</span>
      {label ?? value}
    </span>
  );
}
