export interface PaginationProps {
  page: number;
  totalPages: number;
  totalItems: number;
  onPage: (page: number) => void;
  label?: string;
  /**
   * Whether a link may go to `page` (default: every page from 1 to `totalPages`). Previous
   * and Next are disabled and the last-page link is not offered where it says no.
   */
  reachable?: (page: number) => boolean;
  /** Offer "First page" and, while `reachable` allows it, "Last page" beside Previous/Next. */
  jumps?: boolean;
}

export function Pagination({ page, totalPages, totalItems, onPage, label = 'Pagination', reachable, jumps = false }: PaginationProps) {
  if (totalItems === 0) return null;
  const canGo = reachable ?? ((target: number) => target >= 1 && target <= totalPages);
  const offerLast = jumps && totalPages > 1 && (page >= totalPages || canGo(totalPages));
  return (
    <nav className="toolbar" aria-label={label}>
      {jumps ? (
        <button type="button" onClick={() => onPage(1)} disabled={page <= 1}>
          <span aria-hidden="true">« </span>First page
        </button>
      ) : null}
      <button type="button" onClick={() => onPage(page - 1)} disabled={!canGo(page - 1)}>
        ← Previous
      </button>
      <span aria-live="polite">
        Page {page} of {Math.max(totalPages, 1)} · {totalItems} total
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={!canGo(page + 1)}>
        Next →
      </button>
      {offerLast ? (
        <button type="button" onClick={() => onPage(totalPages)} disabled={page >= totalPages}>
          Last page<span aria-hidden="true"> »</span>
        </button>
      ) : null}
    </nav>
  );
}
