import type { ReactNode } from 'react';

/**
 * A table that may scroll sideways on a narrow screen: a labelled region reachable by
 * keyboard, so its hidden columns can be scrolled into view without a mouse.
 */
export function TableRegion({ label, children }: { label: string; children: ReactNode }) {
  return (
    <div className="table-wrap" role="region" aria-label={label} tabIndex={0}>
      {children}
    </div>
  );
}
