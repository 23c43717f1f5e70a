import { formatAge, formatDateTime } from '../../lib/format';

/** "3 min ago" with the absolute date and time in its title (and machine-readable). */
export function RelativeTime({ iso, now }: { iso: string | null | undefined; now: number }) {
  if (!iso) return <>—</>;
  return (
    <time dateTime={iso} title={formatDateTime(iso)}>
      {formatAge(iso, now)}
    </time>
  );
}
