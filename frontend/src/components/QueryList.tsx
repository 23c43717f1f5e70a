import type { ReactNode } from 'react';
import { ListTable, type ListTableProps } from './ListTable';
import { Pagination, type PaginationProps } from './Pagination';
import { TableRegion } from './TableRegion';
import { Empty, ErrorState, Loading } from './states';

/** What a list page reads of its TanStack query (a `useQuery` result fits). */
export interface ListQuery<D> {
  data: D | undefined;
  error: unknown;
  isPending: boolean;
  isError: boolean;
  refetch: () => unknown;
}

/** A list answer: its items, and the totals of a paged list. */
interface ListPage<T> {
  items: readonly T[];
  totalPages?: number;
  totalItems?: number;
}

interface Props<T> {
  query: ListQuery<ListPage<T>>;
  loadingLabel?: string;
  /** What the empty state says when the list has no item. */
  empty: ReactNode;
  /** The items, drawn once there is one: a table (in a scrollable region named `tableLabel`) or cards. */
  children: (items: readonly T[]) => ReactNode;
  tableLabel?: string;
  /** Page links under the items, for a paged list (the answer's `totalPages` and `totalItems`). */
  pagination?: Pick<PaginationProps, 'page' | 'onPage' | 'reachable' | 'jumps'> & { label: string };
}

/**
 * A list read by a query, as the list pages show it: loading, the error with "Try again", the
 * empty state, the items and, for a paged list, the page links.
 */
export function QueryList<T>({ query, loadingLabel, empty, children, tableLabel, pagination }: Props<T>) {
  const items = query.data?.items ?? [];
  const shown = items.length > 0 ? children(items) : null;
  return (
    <>
      {query.isPending ? <Loading label={loadingLabel} /> : null}
      {query.isError ? <ErrorState error={query.error} onRetry={() => void query.refetch()} /> : null}
      {query.data && items.length === 0 ? <Empty>{empty}</Empty> : null}
      {shown !== null && tableLabel ? <TableRegion label={tableLabel}>{shown}</TableRegion> : shown}
      {pagination && query.data?.totalPages !== undefined && query.data.totalItems !== undefined ? (
        <Pagination {...pagination} totalPages={query.data.totalPages} totalItems={query.data.totalItems} />
      ) : null}
    </>
  );
}

/**
 * A list table read by a query (`QueryList` around a `ListTable`): its states, the table in a
 * scrollable region named `tableLabel`, and the page links of a paged list.
 */
export function QueryTable<T>({
  columns,
  caption,
  hiddenCaption,
  testId,
  children,
  ...list
}: Omit<Props<T>, 'children' | 'tableLabel'> & Omit<ListTableProps<T>, 'rows'> & { tableLabel: string }) {
  return (
    <QueryList<T> {...list}>
      {(rows) => (
        <ListTable columns={columns} rows={rows} caption={caption} hiddenCaption={hiddenCaption} testId={testId}>
          {children}
        </ListTable>
      )}
    </QueryList>
  );
}
