import { keepPreviousData, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState, type SyntheticEvent } from 'react';
import { Link, useSearchParams } from 'react-router';
import { errorMessage } from '../api/client';
import { cancelJob, listJobs, retryJob } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';
import { JOB_STATUSES, TERMINAL_STATUSES, type JobStatus, type JobSummary } from '../api/types';
import { useIsAdmin } from '../auth/hooks';
import { Pagination } from '../components/Pagination';
import { StatusBadge } from '../components/StatusBadge';
import { Empty, ErrorState, Loading } from '../components/states';
import { runAll } from '../lib/bulk';
import { formatDateTime, isoToLocalInput, localInputToIso, priorityLabel, shortId } from '../lib/format';
import {
  activeFilterCount,
  DEFAULT_FILTERS,
  filtersFromSearch,
  filtersToSearch,
  PAGE_SIZES,
  toListParams,
  type JobFilters,
  type SortField,
} from '../lib/jobFilters';
import { notify } from '../lib/notices';
import { usePageTitle } from '../lib/usePageTitle';
import { usePollWhileOffline } from '../live/context';
import { typeLabel } from '../lib/jobTypes';
import { useTypeFilterOptions } from '../lib/useJobTypes';
import { TableRegion } from '../components/TableRegion';

const COLUMNS: { field: SortField | null; label: string; className?: string }[] = [
  { field: null, label: 'Job' },
  { field: 'status', label: 'Status' },
  { field: 'type', label: 'Type' },
  { field: 'priority', label: 'Priority' },
  { field: null, label: 'Attempt', className: 'num' },
  { field: 'createdAt', label: 'Created' },
  { field: 'updatedAt', label: 'Updated' },
];

function isTerminal(status: JobStatus): boolean {
  return TERMINAL_STATUSES.includes(status);
}

function TextFilters({
  filters,
  isAdmin,
  onApply,
}: {
  filters: JobFilters;
  isAdmin: boolean;
  onApply: (patch: Partial<JobFilters>) => void;
}) {
  const [batchId, setBatchId] = useState(filters.batchId);
  const [scheduleId, setScheduleId] = useState(filters.scheduleId);
  const [submittedBy, setSubmittedBy] = useState(filters.submittedBy);
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    onApply({ batchId: batchId.trim(), scheduleId: scheduleId.trim(), submittedBy: submittedBy.trim() });
  };
  return (
    <form onSubmit={submit} className="field-row" aria-label="Filter by id">
      <div className="field">
        <label htmlFor="filter-batch">Batch id</label>
        <input id="filter-batch" value={batchId} onChange={(e) => setBatchId(e.target.value)} className="mono" />
      </div>
      <div className="field">
        <label htmlFor="filter-schedule">Schedule id</label>
        <input id="filter-schedule" value={scheduleId} onChange={(e) => setScheduleId(e.target.value)} className="mono" />
      </div>
      {isAdmin ? (
        <div className="field">
          <label htmlFor="filter-owner">Submitted by</label>
          <input id="filter-owner" type="email" value={submittedBy} onChange={(e) => setSubmittedBy(e.target.value)} />
        </div>
      ) : null}
      <div className="field" style={{ justifyContent: 'flex-end' }}>
        <button type="submit">Apply ids</button>
      </div>
    </form>
  );
}

export function JobsPage() {
  usePageTitle('Jobs');
  const isAdmin = useIsAdmin();
  const client = useQueryClient();
  const [search, setSearch] = useSearchParams();
  const filters = filtersFromSearch(search);
  const params = toListParams(filters);
  const typeOptions = useTypeFilterOptions(filters.type);
  const poll = usePollWhileOffline(5_000);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [busy, setBusy] = useState<'cancel' | 'retry' | null>(null);

  const jobs = useQuery({
    queryKey: queryKeys.jobList(params),
    queryFn: ({ signal }) => listJobs(params, signal),
    placeholderData: keepPreviousData,
    refetchInterval: poll,
  });

  const update = (patch: Partial<JobFilters>, keepPage = false) => {
    const next = { ...filters, ...patch };
    if (!keepPage) next.page = 1;
    setSearch(filtersToSearch(next));
    setSelected(new Set());
  };

  const toggleStatus = (status: JobStatus, on: boolean) =>
    update({ status: on ? [...filters.status, status] : filters.status.filter((s) => s !== status) });

  const sortBy = (field: SortField) => {
    if (filters.sortBy === field) update({ sortDirection: filters.sortDirection === 'asc' ? 'desc' : 'asc' });
    else update({ sortBy: field, sortDirection: field === 'type' || field === 'status' ? 'asc' : 'desc' });
  };

  const items = jobs.data?.items ?? [];
  const chosen = items.filter((job) => selected.has(job.jobId));
  const cancellable = chosen.filter((job) => !isTerminal(job.status));
  const retryable = chosen.filter((job) => job.status === 'dead');
  const allOnPage = items.length > 0 && items.every((job) => selected.has(job.jobId));

  const bulk = async (kind: 'cancel' | 'retry', targets: JobSummary[]) => {
    setBusy(kind);
    const { ok, failed } = await runAll(targets, (job) =>
      kind === 'cancel' ? cancelJob(job.jobId) : retryJob(job.jobId),
    );
    setBusy(null);
    setSelected(new Set());
    const verb = kind === 'cancel' ? 'Cancel' : 'Retry';
    if (failed.length === 0) notify(`${verb} requested for ${ok.length} job(s)`);
    else
      notify(
        `${verb}: ${ok.length} done, ${failed.length} failed (${errorMessage(failed[0]?.error)})`,
        'error',
      );
    void client.invalidateQueries({ queryKey: queryKeys.jobs });
  };

  const filterCount = activeFilterCount(filters);

  return (
    <>
      <div className="page-header">
        <h1>Jobs</h1>
        <Link to="/submit" className="button primary">
          Submit a job
        </Link>
      </div>

      <section className="card" aria-labelledby="filters-heading" role="search">
        <h2 id="filters-heading" style={{ marginTop: 0 }}>
          Filters {filterCount > 0 ? <span className="muted">({filterCount} active)</span> : null}
        </h2>
        <fieldset>
          <legend>Status</legend>
          <div className="radio-row">
            {JOB_STATUSES.map((status) => (
              <label key={status} className="check">
                <input
                  type="checkbox"
                  name="status"
                  value={status}
                  checked={filters.status.includes(status)}
                  onChange={(e) => toggleStatus(status, e.target.checked)}
                />
                {status}
              </label>
            ))}
          </div>
        </fieldset>
        <div className="field-row">
          <div className="field">
            <label htmlFor="filter-type">Type</label>
            <select id="filter-type" value={filters.type} onChange={(e) => update({ type: e.target.value })}>
              <option value="">Any</option>
              {typeOptions.map((type) => (
                <option key={type} value={type}>
                  {typeLabel(type)}
                </option>
              ))}
            </select>
          </div>
          <div className="field">
            <label htmlFor="filter-priority">Priority</label>
            <select id="filter-priority" value={filters.priority} onChange={(e) => update({ priority: e.target.value })}>
              <option value="">Any</option>
              <option value="3">High (3)</option>
              <option value="2">Medium (2)</option>
              <option value="1">Low (1)</option>
            </select>
          </div>
          <div className="field">
            <label htmlFor="filter-from">Created from</label>
            <input
              id="filter-from"
              type="datetime-local"
              value={isoToLocalInput(filters.createdFrom)}
              onChange={(e) => update({ createdFrom: localInputToIso(e.target.value) ?? '' })}
            />
          </div>
          <div className="field">
            <label htmlFor="filter-to">Created before</label>
            <input
              id="filter-to"
              type="datetime-local"
              value={isoToLocalInput(filters.createdTo)}
              onChange={(e) => update({ createdTo: localInputToIso(e.target.value) ?? '' })}
            />
          </div>
        </div>
        <TextFilters
          key={`${filters.batchId}|${filters.scheduleId}|${filters.submittedBy}`}
          filters={filters}
          isAdmin={isAdmin}
          onApply={(patch) => update(patch)}
        />
        <div className="toolbar">
          <button type="button" onClick={() => setSearch(filtersToSearch(DEFAULT_FILTERS))} disabled={filterCount === 0}>
            Clear filters
          </button>
          <label htmlFor="page-size">Rows per page</label>
          <select id="page-size" value={filters.pageSize} onChange={(e) => update({ pageSize: Number(e.target.value) })}>
            {PAGE_SIZES.map((size) => (
              <option key={size} value={size}>
                {size}
              </option>
            ))}
          </select>
        </div>
      </section>

      <div className="toolbar" role="region" aria-label="Bulk actions" data-testid="bulk-actions">
        <span aria-live="polite">{chosen.length} selected</span>
        <button
          type="button"
          onClick={() => void bulk('cancel', cancellable)}
          disabled={cancellable.length === 0 || busy !== null}
        >
          {busy === 'cancel' ? 'Cancelling…' : `Cancel selected (${cancellable.length})`}
        </button>
        <button
          type="button"
          onClick={() => void bulk('retry', retryable)}
          disabled={retryable.length === 0 || busy !== null}
        >
          {busy === 'retry' ? 'Retrying…' : `Retry selected dead (${retryable.length})`}
        </button>
        {jobs.isFetching && !jobs.isPending ? <span className="muted">Refreshing…</span> : null}
      </div>

      {jobs.isPending ? <Loading label="Loading jobs…" /> : null}
      {jobs.isError ? <ErrorState error={jobs.error} onRetry={() => void jobs.refetch()} /> : null}
      {jobs.data && items.length === 0 ? (
        <Empty>
          {filterCount > 0 ? 'No job matches these filters.' : 'No jobs yet. '}
          {filterCount === 0 ? <Link to="/submit">Submit one</Link> : null}
        </Empty>
      ) : null}
      {items.length > 0 ? (
        <TableRegion label="Jobs table">
          <table data-testid="jobs-table">
            <caption className="visually-hidden">
              Jobs, sorted by {filters.sortBy} {filters.sortDirection === 'asc' ? 'ascending' : 'descending'}
            </caption>
            <thead>
              <tr>
                <th scope="col">
                  <input
                    type="checkbox"
                    aria-label="Select all jobs on this page"
                    checked={allOnPage}
                    onChange={(e) => setSelected(e.target.checked ? new Set(items.map((j) => j.jobId)) : new Set())}
                  />
                </th>
                {COLUMNS.map((column) => {
                  const sorted = column.field !== null && filters.sortBy === column.field;
                  return (
                    <th
                      key={column.label}
                      scope="col"
                      className={column.className}
                      aria-sort={sorted ? (filters.sortDirection === 'asc' ? 'ascending' : 'descending') : undefined}
                    >
                      {column.field ? (
                        <button type="button" className="sort" onClick={() => sortBy(column.field as SortField)}>
                          {column.label}
                          <span aria-hidden="true">{sorted ? (filters.sortDirection === 'asc' ? ' ▲' : ' ▼') : ' ↕'}</span>
                        </button>
                      ) : (
                        column.label
                      )}
                    </th>
                  );
                })}
                {isAdmin ? <th scope="col">Submitted by</th> : null}
                <th scope="col">Last error</th>
              </tr>
            </thead>
            <tbody>
              {items.map((job) => (
                <tr key={job.jobId} data-selected={selected.has(job.jobId)} data-testid="job-row" data-job-id={job.jobId}>
                  <td>
                    <input
                      type="checkbox"
                      aria-label={`Select job ${shortId(job.jobId)}`}
                      checked={selected.has(job.jobId)}
                      onChange={(e) => {
                        const next = new Set(selected);
                        if (e.target.checked) next.add(job.jobId);
                        else next.delete(job.jobId);
                        setSelected(next);
                      }}
                    />
                  </td>
                  <td>
                    <Link to={`/jobs/${job.jobId}`} className="mono" aria-label={`Job ${job.jobId}`}>
                      {shortId(job.jobId)}
                    </Link>
                  </td>
                  <td>
                    <StatusBadge status={job.status} />
                  </td>
                  <td>{job.type}</td>
                  <td>{priorityLabel(job.priority)}</td>
                  <td className="num">
                    {job.attempt}/{job.maxAttempts}
                  </td>
                  <td className="nowrap">{formatDateTime(job.createdAt)}</td>
                  <td className="nowrap">{formatDateTime(job.updatedAt)}</td>
                  {isAdmin ? <td>{job.submittedBy}</td> : null}
                  <td className="truncate" title={job.lastError ?? undefined}>
                    {job.lastError ?? ''}
                  </td>
                </tr>
              ))}
            </tbody>
          </table>
        </TableRegion>
      ) : null}
      {jobs.data ? (
        <Pagination
          page={filters.page}
          totalPages={jobs.data.totalPages}
          totalItems={jobs.data.totalItems}
          onPage={(page) => update({ page }, true)}
          label="Jobs pages"
        />
      ) : null}
    </>
  );
}
