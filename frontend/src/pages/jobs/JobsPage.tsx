import { keepPreviousData, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState, type SyntheticEvent } from 'react';
import { errorMessage, isApiError } from '../../api/client';
import { cancelJob, listJobs, retryJob } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { JOB_STATUSES, TERMINAL_STATUSES, type JobStatus, type JobSummary } from '../../api/types';
import { useIsAdmin } from '../../auth/hooks';
import { Denied } from '../../components/Denied';
import { PageHeader } from '../../components/PageHeader';
import type { Column } from '../../components/ListTable';
import { PriorityOptions } from '../../components/PriorityOptions';
import { QueryTable } from '../../components/QueryList';
import { SelectAllCheckbox, SelectRowCheckbox } from '../../components/SelectCheckbox';
import { JobLink } from '../../components/JobLink';
import { StatusBadge } from '../../components/StatusBadge';
import { TypeFilter } from '../../components/TypeFilter';
import { runAll } from '../../lib/bulk';
import { formatDateTime, isoToLocalInput, localInputToIso, priorityLabel, shortId } from '../../lib/format';
import {
  activeFilterCount,
  DEFAULT_FILTERS,
  filtersFromSearch,
  filtersToSearch,
  PAGE_SIZES,
  toListParams,
  type JobFilters,
  type SortField,
} from '../../lib/jobFilters';
import { listingOf, MAX_OFFSET_ROWS, pageTarget, rememberCursors } from '../../lib/jobPages';
import { notify } from '../../lib/notices';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { useTypeFilterOptions } from '../../lib/useJobTypes';
import { useSelection } from '../../lib/useSelection';
import { deniedReason, rightsIn, useProjectAccess, useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useProjectId, useSearchParams } from '../../project/navigation';
import { ProjectName } from '../../project/ProjectName';
import { useScopedQuery } from '../../project/useScopedQuery';

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

/** The API refused the page asked for: a number past the offset's reach, or a cursor not of this listing. */
function unreachablePage(error: unknown): boolean {
  return isApiError(error) && error.status === 422 && ['pageNumber', 'cursor'].includes(error.details[0]?.field ?? '');
}

/** A `datetime-local` input of a filter that holds an ISO instant ('' for none). */
function DateTimeFilter({ id, label, value, onChange }: { id: string; label: string; value: string; onChange: (iso: string) => void }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="datetime-local"
        value={isoToLocalInput(value)}
        onChange={(e) => onChange(localInputToIso(e.target.value) ?? '')}
      />
    </div>
  );
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
  const [busy, setBusy] = useState<'cancel' | 'retry' | null>(null);
  const projectId = useProjectId();
  const access = useProjectAccess();
  // the project that acts: with one chosen, a viewer there gets no bulk action at all; with
  // all projects, each selected job's project decides
  const rights = useRights();
  const bulkShown = projectId === null || rights.act;
  const mayAct = (job: JobSummary) => rightsIn(access, job.projectId).act;
  // with all projects chosen and more than one to see, each row says its project
  const projectColumn = projectId === null && (access?.directory.entries.size ?? 0) > 1;

  const jobs = useScopedQuery({
    queryKey: queryKeys.jobList(params),
    queryFn: ({ signal }) => listJobs(params, signal),
    placeholderData: keepPreviousData,
    refetchInterval: poll,
  });
  const items = jobs.data?.items ?? [];
  const selection = useSelection(items, (job) => job.jobId);

  // the page links of the answer on screen; none while another page loads
  const listing = `${listingOf(filters)}|project=${projectId ?? ''}`;
  const shown = jobs.isPlaceholderData ? undefined : jobs.data;
  const pageOf = (page: number) => (shown ? pageTarget(listing, shown, page) : null);
  useEffect(() => {
    if (!shown) return;
    rememberCursors(listing, [
      { page: shown.pageNumber, cursor: filters.cursor },
      { page: shown.pageNumber + 1, cursor: shown.nextCursor ?? '' },
    ]);
  }, [listing, shown, filters.cursor]);

  /** Apply `patch` to the URL-held state; anything but paging goes back to page 1 (no cursor). */
  const update = (patch: Partial<JobFilters>, keepPage = false) => {
    const next = { ...filters, ...patch };
    if (!keepPage) {
      next.page = 1;
      next.cursor = '';
    }
    setSearch(filtersToSearch(next));
    selection.clear();
  };

  const toggleStatus = (status: JobStatus, on: boolean) =>
    update({ status: on ? [...filters.status, status] : filters.status.filter((s) => s !== status) });

  const sortBy = (field: SortField) => {
    if (filters.sortBy === field) update({ sortDirection: filters.sortDirection === 'asc' ? 'desc' : 'asc' });
    else update({ sortBy: field, sortDirection: field === 'type' || field === 'status' ? 'asc' : 'desc' });
  };

  const chosen = selection.chosen;
  const allowed = chosen.filter(mayAct);
  const cancellable = allowed.filter((job) => !isTerminal(job.status));
  const retryable = allowed.filter((job) => job.status === 'dead');
  const leftOut = chosen.length - allowed.length;

  const bulk = async (kind: 'cancel' | 'retry', targets: JobSummary[]) => {
    setBusy(kind);
    const { ok, failed } = await runAll(targets, (job) =>
      kind === 'cancel' ? cancelJob(job.jobId) : retryJob(job.jobId),
    );
    setBusy(null);
    selection.clear();
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
  const columns: Column[] = [
    ...(bulkShown ? [{ label: <SelectAllCheckbox selection={selection} label="Select all jobs on this page" /> }] : []),
    ...COLUMNS.map((column): Column => {
      const sorted = column.field !== null && filters.sortBy === column.field;
      const field = column.field;
      return {
        className: column.className,
        sort: sorted ? (filters.sortDirection === 'asc' ? 'ascending' : 'descending') : undefined,
        label: field ? (
          <button type="button" className="sort" onClick={() => sortBy(field)}>
            {column.label}
            <span aria-hidden="true">{sorted ? (filters.sortDirection === 'asc' ? ' ▲' : ' ▼') : ' ↕'}</span>
          </button>
        ) : (
          column.label
        ),
      };
    }),
    ...(projectColumn ? [{ label: 'Project' }] : []),
    ...(isAdmin ? [{ label: 'Submitted by' }] : []),
    { label: 'Last error' },
  ];

  return (
    <>
      <PageHeader title="Jobs" link={rights.submit ? { to: '/submit', label: 'Submit a job' } : undefined} />

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
          <TypeFilter
            id="filter-type"
            label="Type"
            value={filters.type}
            options={typeOptions}
            onChange={(type) => update({ type })}
          />
          <div className="field">
            <label htmlFor="filter-priority">Priority</label>
            <select id="filter-priority" value={filters.priority} onChange={(e) => update({ priority: e.target.value })}>
              <option value="">Any</option>
              <PriorityOptions descending />
            </select>
          </div>
          <DateTimeFilter
            id="filter-from"
            label="Created from"
            value={filters.createdFrom}
            onChange={(createdFrom) => update({ createdFrom })}
          />
          <DateTimeFilter id="filter-to" label="Created before" value={filters.createdTo} onChange={(createdTo) => update({ createdTo })} />
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

      {bulkShown ? (
        <div className="toolbar" role="region" aria-label="Bulk actions" data-testid="bulk-actions">
          <span aria-live="polite">
            {chosen.length} selected
            {leftOut > 0 ? `, ${leftOut} in projects where your role may not act on jobs (left out)` : ''}
          </span>
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
      ) : (
        <Denied testId="bulk-actions-denied">{deniedReason(rights, 'act', 'retrying or cancelling jobs')}</Denied>
      )}

      {unreachablePage(jobs.error) ? (
        <p data-testid="jobs-page-unreachable">
          {filters.cursor
            ? 'The link to this page does not fit this listing any more.'
            : `Page ${filters.page} is past the first ${MAX_OFFSET_ROWS.toLocaleString('en-US')} jobs, which page numbers reach.`}{' '}
          <button type="button" onClick={() => update({})}>
            Go to the first page
          </button>{' '}
          and follow Next from there.
        </p>
      ) : null}

      <QueryTable
        query={jobs}
        loadingLabel="Loading jobs…"
        empty={
          <>
            {filterCount > 0 ? 'No job matches these filters.' : 'No jobs yet. '}
            {filterCount === 0 && rights.submit ? <Link to="/submit">Submit one</Link> : null}
          </>
        }
        tableLabel="Jobs table"
        pagination={{
          page: jobs.data?.pageNumber ?? filters.page,
          onPage: (page) => {
            const target = pageOf(page);
            if (target) update(target, true);
          },
          reachable: (page) => pageOf(page) !== null,
          jumps: true,
          label: 'Jobs pages',
        }}
        testId="jobs-table"
        caption={`Jobs, sorted by ${filters.sortBy} ${filters.sortDirection === 'asc' ? 'ascending' : 'descending'}`}
        hiddenCaption
        columns={columns}
      >
        {(job) => (
          <tr
            key={job.jobId}
            data-selected={selection.has(job.jobId)}
            data-testid="job-row"
            data-job-id={job.jobId}
            data-project-id={job.projectId}
          >
            {bulkShown ? (
              <td>
                <SelectRowCheckbox selection={selection} id={job.jobId} label={`Select job ${shortId(job.jobId)}`} />
              </td>
            ) : null}
            <td>
              <JobLink jobId={job.jobId} label={`Job ${job.jobId}`} />
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
            {projectColumn ? (
              <td>
                <ProjectName projectId={job.projectId} />
              </td>
            ) : null}
            {isAdmin ? <td>{job.submittedBy}</td> : null}
            <td className="truncate" title={job.lastError ?? undefined}>
              {job.lastError ?? ''}
            </td>
          </tr>
        )}
      </QueryTable>
    </>
  );
}
