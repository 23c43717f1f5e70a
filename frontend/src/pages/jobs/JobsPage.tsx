import { keepPreviousData, useQueryClient } from '@tanstack/react-query';
import { useEffect, useState } from 'react';
import { errorMessage, isApiError } from '../../api/client';
import { cancelJob, listJobs, retryJob } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { TERMINAL_STATUSES, type JobStatus, type JobSummary } from '../../api/types';
import { useIsAdmin } from '../../auth/hooks';
import { Denied } from '../../components/Denied';
import { PageHeader } from '../../components/PageHeader';
import type { Column } from '../../components/ListTable';
import { QueryTable } from '../../components/QueryList';
import { SelectAllCheckbox, SelectRowCheckbox } from '../../components/SelectCheckbox';
import { JobLink } from '../../components/JobLink';
import { StatusBadge } from '../../components/StatusBadge';
import { runAll } from '../../lib/bulk';
import { formatDuration, priorityLabel, shortId } from '../../lib/format';
import {
  activeFilterCount,
  DEFAULT_FILTERS,
  filtersFromSearch,
  filtersToSearch,
  toListParams,
  type JobFilters,
  type SortField,
} from '../../lib/jobFilters';
import { listingOf, MAX_OFFSET_ROWS, pageTarget, rememberCursors } from '../../lib/jobPages';
import { notify } from '../../lib/notices';
import { runDurationMs, useNow } from '../../lib/time';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { useTypeFilterOptions } from '../../lib/useJobTypes';
import { useSelection } from '../../lib/useSelection';
import { deniedReason, rightsIn, useProjectAccess, useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useProjectId, useSearchParams } from '../../project/navigation';
import { ProjectName } from '../../project/ProjectName';
import { useScopedQuery } from '../../project/useScopedQuery';
import { JobFiltersPanel } from './JobFiltersPanel';
import { JobSearchBox } from './JobSearchBox';
import { LatestError } from './LatestError';
import { RelativeTime } from './RelativeTime';

const COLUMNS: { field: SortField | null; label: string; className?: string }[] = [
  { field: null, label: 'Job' },
  { field: 'status', label: 'Status' },
  { field: 'type', label: 'Type' },
  { field: 'priority', label: 'Priority' },
  { field: null, label: 'Attempt', className: 'num' },
  { field: null, label: 'Duration', className: 'num' },
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

export function JobsPage() {
  usePageTitle('Jobs');
  const isAdmin = useIsAdmin();
  const client = useQueryClient();
  const [search, setSearch] = useSearchParams();
  const filters = filtersFromSearch(search);
  const params = toListParams(filters);
  const typeOptions = useTypeFilterOptions(filters.type);
  const poll = usePollWhileOffline(5_000);
  const now = useNow();
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
    { label: 'Error' },
  ];

  return (
    <>
      <PageHeader title="Jobs" link={rights.submit ? { to: '/submit', label: 'Submit a job' } : undefined} />

      <JobSearchBox key={filters.search} value={filters.search} onSearch={(search) => update({ search })} />
      <JobFiltersPanel
        filters={filters}
        filterCount={filterCount}
        isAdmin={isAdmin}
        typeOptions={typeOptions}
        onUpdate={update}
        onClear={() => setSearch(filtersToSearch(DEFAULT_FILTERS))}
      />

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

      {jobs.data?.totalCapped ? (
        <p className="muted" data-testid="jobs-search-capped">
          More than {jobs.data.totalItems.toLocaleString('en-US')} jobs match this search; the count stops there. Narrow
          it (a longer id prefix, a type or status) to list fewer.
        </p>
      ) : null}

      <QueryTable
        query={jobs}
        loadingLabel="Loading jobs…"
        empty={
          <>
            {filters.search
              ? 'No job matches this search.'
              : filterCount > 0
                ? 'No job matches these filters.'
                : 'No jobs yet. '}
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
            <td className="num nowrap">{formatDuration(runDurationMs(job, now))}</td>
            <td className="nowrap">
              <RelativeTime iso={job.createdAt} now={now} />
            </td>
            <td className="nowrap">
              <RelativeTime iso={job.updatedAt} now={now} />
            </td>
            {projectColumn ? (
              <td>
                <ProjectName projectId={job.projectId} />
              </td>
            ) : null}
            {isAdmin ? <td>{job.submittedBy}</td> : null}
            <td className="truncate">
              <LatestError error={job.latestError} />
            </td>
          </tr>
        )}
      </QueryTable>
    </>
  );
}
