import { useState } from 'react';

/** Where this tab remembers whether the filters are shown (each tab keeps its own). */
export const FILTERS_OPEN_KEY = 'jobs.filtersOpen';

function storedOpen(): boolean {
  try {
    return sessionStorage.getItem(FILTERS_OPEN_KEY) !== 'false';
  } catch {
    return true;
  }
}

/** Whether the filters are shown, remembered per tab (sessionStorage); shown at first. */
export function useFiltersOpen(): [boolean, (open: boolean) => void] {
  const [open, setOpen] = useState(storedOpen);
  const change = (next: boolean) => {
    setOpen(next);
    try {
      sessionStorage.setItem(FILTERS_OPEN_KEY, String(next));
    } catch {
      /* storage refused: the choice lasts as long as the page */
    }
  };
  return [open, change];
}
