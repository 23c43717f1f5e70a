import { useRef, type ReactNode } from 'react';
import { useCellLabels } from '../lib/cellLabels';

/** A column of a list table: its header (text or a control), its class, how the rows are sorted by it. */
export interface Column {
  label: ReactNode;
  className?: string;
  sort?: 'ascending' | 'descending';
}

export interface ListTableProps<T> {
  columns: readonly Column[];
  rows: readonly T[];
  /** A row's `<tr>` (with its key). */
  children: (row: T) => ReactNode;
  caption?: ReactNode;
  /** Hides the caption from sight (screen readers still read it). */
  hiddenCaption?: boolean;
  testId?: string;
}

/**
 * A table of rows under one header row of column headers. On a phone its rows become cards
 * (index.css: `table.list-table`), each cell labelled with its column (`data-label`).
 */
export function ListTable<T>({ columns, rows, children, caption, hiddenCaption = false, testId }: ListTableProps<T>) {
  const table = useRef<HTMLTableElement>(null);
  useCellLabels(table);
  return (
    <table ref={table} className="list-table" data-testid={testId}>
      {caption !== undefined ? <caption className={hiddenCaption ? 'visually-hidden' : undefined}>{caption}</caption> : null}
      <thead>
        <tr>
          {columns.map((column, index) => (
            <th key={index} scope="col" className={column.className} aria-sort={column.sort}>
              {column.label}
            </th>
          ))}
        </tr>
      </thead>
      <tbody>{rows.map(children)}</tbody>
    </table>
  );
}
