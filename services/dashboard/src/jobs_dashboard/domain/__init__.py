"""Pure logic of the dashboard: query building, paging, read models. No I/O."""
