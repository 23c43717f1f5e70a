"""Pure worker logic: job errors and their classification, job context, report summaries."""
