/**
 * On a phone a list table's rows become cards (index.css, "phones"): each cell then shows its
 * column's name, which it reads from its `data-label`. The labels are written here, from the
 * table's own column headers, so any page's table conforms without naming its cells twice.
 */
import { useLayoutEffect, type RefObject } from 'react';

/**
 * A header's words as a label: its screen-reader-only parts ("Inspect" over a column of
 * buttons) and its decorations (a sort arrow, hidden from screen readers) left out.
 */
function visibleText(header: Element): string {
  const copy = header.cloneNode(true) as Element;
  for (const hidden of Array.from(copy.querySelectorAll('.visually-hidden, [aria-hidden="true"]'))) hidden.remove();
  return copy.textContent.replace(/\s+/g, ' ').trim();
}

/**
 * Set `data-label` on every body cell of `table` to the text of its column's header (counting
 * column spans); a cell spanning several columns, or under a header with no visible text
 * (a select-all checkbox), gets none.
 */
export function labelCells(table: HTMLTableElement): void {
  const headerRow = table.tHead?.rows[0];
  if (!headerRow) return;
  const names: string[] = [];
  for (const header of Array.from(headerRow.cells)) {
    const text = visibleText(header);
    for (let span = 0; span < Math.max(1, header.colSpan); span += 1) names.push(text);
  }
  for (const body of Array.from(table.tBodies)) {
    for (const row of Array.from(body.rows)) {
      let column = 0;
      for (const cell of Array.from(row.cells)) {
        const label = cell.colSpan > 1 ? '' : (names[column] ?? '');
        if (label) {
          if (cell.getAttribute('data-label') !== label) cell.setAttribute('data-label', label);
        } else if (cell.hasAttribute('data-label')) {
          cell.removeAttribute('data-label');
        }
        column += Math.max(1, cell.colSpan);
      }
    }
  }
}

/** Keep the cells of the table at `ref` labelled as its rows and headers change. */
export function useCellLabels(ref: RefObject<HTMLTableElement | null>): void {
  useLayoutEffect(() => {
    const table = ref.current;
    if (!table) return undefined;
    labelCells(table);
    // rows drawn by components of their own change without this table rendering again
    const observer = new MutationObserver(() => labelCells(table));
    observer.observe(table, { childList: true, subtree: true, characterData: true });
    return () => observer.disconnect();
  }, [ref]);
}
