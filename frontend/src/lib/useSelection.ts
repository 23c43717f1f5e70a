import { useState } from 'react';

/** The rows of a list page picked with their checkboxes (by id), for the bulk actions. */
export interface Selection<T> {
  /** The rows shown that are picked. */
  chosen: T[];
  /** Every row shown is picked (and there is one). */
  allOnPage: boolean;
  has: (id: string) => boolean;
  toggle: (id: string, on: boolean) => void;
  toggleAll: (on: boolean) => void;
  clear: () => void;
}

/** Picks among `items`, the rows shown, each known by `idOf`; cleared by the page when the rows change. */
export function useSelection<T>(items: readonly T[], idOf: (item: T) => string): Selection<T> {
  const [selected, setSelected] = useState<ReadonlySet<string>>(() => new Set());
  return {
    chosen: items.filter((item) => selected.has(idOf(item))),
    allOnPage: items.length > 0 && items.every((item) => selected.has(idOf(item))),
    has: (id) => selected.has(id),
    toggle: (id, on) => {
      const next = new Set(selected);
      if (on) next.add(id);
      else next.delete(id);
      setSelected(next);
    },
    toggleAll: (on) => setSelected(on ? new Set(items.map(idOf)) : new Set()),
    clear: () => setSelected(new Set()),
  };
}
