interface Props {
  page: number;
  totalPages: number;
  totalItems: number;
  onPage: (page: number) => void;
  label?: string;
}

export function Pagination({ page, totalPages, totalItems, onPage, label = 'Pagination' }: Props) {
  if (totalItems === 0) return null;
  return (
    <nav className="toolbar" aria-label={label}>
      <button type="button" onClick={() => onPage(page - 1)} disabled={page <= 1}>
        ← Previous
      </button>
      <span aria-live="polite">
        Page {page} of {Math.max(totalPages, 1)} · {totalItems} total
      </span>
      <button type="button" onClick={() => onPage(page + 1)} disabled={page >= totalPages}>
        Next →
      </button>
    </nav>
  );
}
