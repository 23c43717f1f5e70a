import type { Selection } from '../lib/useSelection';

/** The header checkbox of a list table: picks every row shown, or none. */
export function SelectAllCheckbox({ selection, label }: { selection: Pick<Selection<unknown>, 'allOnPage' | 'toggleAll'>; label: string }) {
  return (
    <input
      type="checkbox"
      aria-label={label}
      checked={selection.allOnPage}
      onChange={(e) => selection.toggleAll(e.target.checked)}
    />
  );
}

/** A row's checkbox in a list table. */
export function SelectRowCheckbox({
  selection,
  id,
  label,
}: {
  selection: Pick<Selection<unknown>, 'has' | 'toggle'>;
  id: string;
  label: string;
}) {
  return <input type="checkbox" aria-label={label} checked={selection.has(id)} onChange={(e) => selection.toggle(id, e.target.checked)} />;
}
