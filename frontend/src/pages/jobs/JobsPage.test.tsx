import { cleanup, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import type { JobSummary, JobsPage as Page } from '../../api/types';
import { filtersFromSearch, filtersToSearch, toListParams } from '../../lib/jobFilters';
import { optionValues } from '../../test/forms';
import { jobSummary, jobsPage } from '../../test/jobs';
import { BUILTIN_FILTER_OPTIONS, builtinTypes, jobType } from '../../test/jobTypes';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { FILTERS_OPEN_KEY } from './filtersOpen';
import { JobsPage } from './JobsPage';

vi.mock('../../api/endpoints', () => ({
  listJobs: vi.fn(),
  cancelJob: vi.fn(() => Promise.resolve({ jobId: 'x', status: 'cancelled' })),
  retryJob: vi.fn(() => Promise.resolve({ jobId: 'x', status: 'retry_requested' })),
  listJobTypes: vi.fn(),
}));

const listJobs = vi.mocked(endpoints.listJobs);
const listJobTypes = vi.mocked(endpoints.listJobTypes);
const cancelJob = vi.mocked(endpoints.cancelJob);

const A = 'aaaaaaaa-0000-4000-8000-000000000001';
const B = 'bbbbbbbb-0000-4000-8000-000000000002';

function page(items: JobSummary[]): Page {
  return jobsPage(items, { pageNumber: 2, totalItems: 45, totalPages: 3 });
}

const location = () => screen.getByTestId('location').textContent;

/** The last query sent to GET /api/jobs. */
const lastParams = () => listJobs.mock.lastCall?.[0];

/**
 * A listing of 20,000 jobs (1,000 pages of 20, one job shown per page) as the API pages it:
 * page p by its number or by the cursor `c-<p>` the page before it answered.
 */
function deepListing() {
  listJobs.mockImplementation((params) => {
    const pageNumber = params.cursor ? Number(params.cursor.slice(2)) : (params.pageNumber ?? 1);
    const jobId = `aaaaaaaa-0000-4000-8000-${String(pageNumber).padStart(12, '0')}`;
    return Promise.resolve(
      jobsPage([jobSummary(jobId, 'queued')], {
        pageNumber,
        totalItems: 20_000,
        totalPages: 1_000,
        nextCursor: pageNumber < 1_000 ? `c-${pageNumber + 1}` : null,
      }),
    );
  });
}

const pageNav = () => screen.getByRole('navigation', { name: 'Jobs pages' });
const pageButton = (name: RegExp) => within(pageNav()).getByRole('button', { name });

describe('job filters in the URL', () => {
  it('reads what the API accepts and drops the rest', () => {
    const filters = filtersFromSearch(
      new URLSearchParams('status=running,QUEUED&status=bogus&priority=7&sortBy=evil&sortDirection=asc&page=0&batchId=not-a-uuid&type=email'),
    );
    expect(filters).toMatchObject({
      status: ['running', 'queued'],
      priority: '',
      sortBy: 'createdAt',
      sortDirection: 'asc',
      page: 1,
      batchId: '',
      type: 'email',
    });
  });

  it('writes only what differs from the defaults and round-trips', () => {
    const filters = filtersFromSearch(new URLSearchParams('status=dead&priority=2&page=3&pageSize=50'));
    const search = filtersToSearch(filters);
    expect(search.toString()).toBe('status=dead&priority=2&page=3&pageSize=50');
    expect(filtersFromSearch(search)).toEqual(filters);
    expect(toListParams(filters)).toEqual({
      status: ['dead'],
      priority: 2,
      pageNumber: 3,
      pageSize: 50,
      sortBy: 'createdAt',
      sortDirection: 'desc',
    });
  });

  it('keeps the cursor a page was reached by beside its number, and asks by the cursor', () => {
    const filters = filtersFromSearch(new URLSearchParams('status=dead&page=600&cursor=c-600'));
    expect(filters).toMatchObject({ page: 600, cursor: 'c-600' });
    expect(filtersToSearch(filters).toString()).toBe('status=dead&page=600&cursor=c-600');
    // the cursor names its page: no pageNumber (the API would check it against its own range)
    expect(toListParams(filters)).toEqual({
      status: ['dead'],
      cursor: 'c-600',
      pageSize: 20,
      sortBy: 'createdAt',
      sortDirection: 'desc',
    });
    expect(filtersFromSearch(new URLSearchParams(`cursor=${'x'.repeat(2_001)}`)).cursor).toBe('');
  });
});

describe('<JobsPage>', () => {
  beforeEach(() => {
    listJobs.mockReset();
    listJobs.mockResolvedValue(page([jobSummary(A, 'running'), jobSummary(B, 'succeeded')]));
    cancelJob.mockClear();
    listJobTypes.mockReset();
    // the API lists the types in no particular order
    listJobTypes.mockResolvedValue({ types: [jobType('zeta.last'), ...builtinTypes(), jobType('acme.reverse')] });
  });

  it('queries the API with the filters held in the URL', async () => {
    renderWithProviders(<JobsPage />, {
      route: '/jobs?status=running,queued&priority=3&sortBy=priority&sortDirection=asc&page=2&createdFrom=2030-01-01T00:00:00.000Z',
    });
    await screen.findByTestId('jobs-table');
    expect(listJobs).toHaveBeenCalledWith(
      {
        status: ['running', 'queued'],
        priority: 3,
        sortBy: 'priority',
        sortDirection: 'asc',
        pageNumber: 2,
        pageSize: 20,
        createdFrom: '2030-01-01T00:00:00.000Z',
      },
      expect.anything(),
    );
    expect(screen.getByRole('checkbox', { name: 'running' })).toBeChecked();
    expect(screen.getByRole('checkbox', { name: 'queued' })).toBeChecked();
    expect(screen.getByRole('checkbox', { name: 'dead' })).not.toBeChecked();
    expect(screen.getByLabelText('Priority')).toHaveValue('3');
    expect(screen.getByRole('columnheader', { name: /Priority/ })).toHaveAttribute('aria-sort', 'ascending');
    expect(screen.getByText(/Page 2 of 3/)).toBeInTheDocument();
  });

  it('changing a filter updates the URL (back to page 1) and the query', async () => {
    const user = userEvent.setup();
    renderWithProviders(<JobsPage />, { route: '/jobs?status=running&page=2' });
    await screen.findByTestId('jobs-table');
    await user.click(screen.getByRole('checkbox', { name: 'dead' }));
    expect(location()).toBe('/jobs?status=running%2Cdead');
    await waitFor(() =>
      expect(listJobs).toHaveBeenLastCalledWith(
        expect.objectContaining({ status: ['running', 'dead'], pageNumber: 1 }),
        expect.anything(),
      ),
    );
    await user.selectOptions(screen.getByLabelText('Type'), 'email');
    expect(location()).toBe('/jobs?status=running%2Cdead&type=email');
    await user.click(screen.getByRole('button', { name: /^Type/ }));
    expect(location()).toContain('sortBy=type');
    expect(location()).toContain('sortDirection=asc');
    await user.click(screen.getByRole('button', { name: 'Clear filters' }));
    expect(location()).toBe('/jobs');
  });

  it('the type filter lists the custom types after the built-ins and keeps a type from the URL', async () => {
    const user = userEvent.setup();
    renderWithProviders(<JobsPage />, { route: '/jobs?type=gone.type' });
    await screen.findByTestId('jobs-table');
    const select = screen.getByLabelText('Type');
    await within(select).findByRole('option', { name: 'acme.reverse' });
    expect(optionValues(select)).toEqual([
      ...BUILTIN_FILTER_OPTIONS,
      'acme.reverse',
      'zeta.last',
      'gone.type', // not listed (a type no worker announces any more): still the filter's value
    ]);
    expect(within(select).getByRole('option', { name: 'email' })).toHaveValue('email'); // by its name
    expect(select).toHaveValue('gone.type');
    expect(listJobs).toHaveBeenCalledWith(expect.objectContaining({ type: 'gone.type' }), expect.anything());

    await user.selectOptions(select, 'acme.reverse');
    expect(location()).toBe('/jobs?type=acme.reverse');
    await waitFor(() =>
      expect(listJobs).toHaveBeenLastCalledWith(expect.objectContaining({ type: 'acme.reverse' }), expect.anything()),
    );
    // an unlisted type is an option only while it is the filter's value
    expect(optionValues(select)).not.toContain('gone.type');
  });

  it('the type filter offers no type of its own when the type list failed: only the URL one', async () => {
    listJobTypes.mockRejectedValue(new Error('job types unavailable'));
    renderWithProviders(<JobsPage />, { route: '/jobs?type=acme.reverse' });
    await screen.findByTestId('jobs-table');
    const select = screen.getByLabelText('Type');
    await waitFor(() => expect(listJobTypes).toHaveBeenCalled());
    expect(optionValues(select)).toEqual(['', 'acme.reverse']);
    expect(select).toHaveValue('acme.reverse');
  });

  it('id filters apply on submit', async () => {
    const user = userEvent.setup();
    renderWithProviders(<JobsPage />, { route: '/jobs' });
    await screen.findByTestId('jobs-table');
    await user.type(screen.getByLabelText('Batch id'), 'cccccccc-0000-4000-8000-000000000003');
    expect(location()).toBe('/jobs');
    await user.click(screen.getByRole('button', { name: 'Apply ids' }));
    expect(location()).toBe('/jobs?batchId=cccccccc-0000-4000-8000-000000000003');
  });

  it('takes a short id as shown and refuses a shorter one at its field, never ignoring it', async () => {
    const user = userEvent.setup();
    renderWithProviders(<JobsPage />, { route: '/jobs' });
    await screen.findByTestId('jobs-table');
    await user.type(screen.getByLabelText('Schedule id'), 'cccccc');
    await user.click(screen.getByRole('button', { name: 'Apply ids' }));
    expect(location()).toBe('/jobs');
    expect(screen.getByLabelText('Schedule id')).toHaveAccessibleDescription(/at least 8 characters/);
    await user.type(screen.getByLabelText('Schedule id'), 'cc');
    await user.click(screen.getByRole('button', { name: 'Apply ids' }));
    expect(location()).toBe('/jobs?scheduleId=cccccccc');
  });

  it('bulk-cancels only the selected jobs that can still be cancelled', async () => {
    const user = userEvent.setup();
    renderWithProviders(<JobsPage />, { route: '/jobs' });
    const table = await screen.findByTestId('jobs-table');
    await user.click(within(table).getByRole('checkbox', { name: 'Select all jobs on this page' }));
    const cancel = screen.getByRole('button', { name: 'Cancel selected (1)' });
    expect(screen.getByRole('button', { name: 'Retry selected dead (0)' })).toBeDisabled();
    await user.click(cancel);
    await waitFor(() => expect(cancelJob).toHaveBeenCalledTimes(1));
    expect(cancelJob).toHaveBeenCalledWith(A);
  });

  it('shows an empty state and no table when nothing matches', async () => {
    listJobs.mockResolvedValue(jobsPage([], { totalPages: 0 }));
    renderWithProviders(<JobsPage />, { route: '/jobs?status=dead' });
    expect(await screen.findByText('No job matches these filters.')).toBeInTheDocument();
    expect(screen.queryByTestId('jobs-table')).not.toBeInTheDocument();
  });

  it('Next follows the nextCursor of the page shown, past the pages numbers reach; Previous steps back by the cursors seen', async () => {
    deepListing();
    const user = userEvent.setup();
    // page 500 is the last one an offset reaches (its jobs 9,981-10,000)
    renderWithProviders(<JobsPage />, { route: '/jobs?page=500' });
    await screen.findByText(/Page 500 of 1000/);
    expect(lastParams()).toEqual(expect.objectContaining({ pageNumber: 500 }));

    await user.click(pageButton(/Next/));
    expect(location()).toBe('/jobs?page=501&cursor=c-501');
    await screen.findByText(/Page 501 of 1000/);
    expect(lastParams()).toEqual(expect.objectContaining({ cursor: 'c-501' }));
    expect(lastParams()).not.toHaveProperty('pageNumber');

    await user.click(pageButton(/Next/));
    expect(location()).toBe('/jobs?page=502&cursor=c-502');
    await screen.findByText(/Page 502 of 1000/);
    expect(lastParams()).toEqual(expect.objectContaining({ cursor: 'c-502' }));

    // back by the cursor page 501 was read by (no offset reaches it)...
    await user.click(pageButton(/Previous/));
    expect(location()).toBe('/jobs?page=501&cursor=c-501');
    await screen.findByText(/Page 501 of 1000/);
    // ...and to page 500 by its number, as it was read
    await user.click(pageButton(/Previous/));
    expect(location()).toBe('/jobs?page=500');
    await screen.findByText(/Page 500 of 1000/);
  });

  it('the cursors seen outlive the page (a reload, a visit to a job)', async () => {
    deepListing();
    const user = userEvent.setup();
    const first = renderWithProviders(<JobsPage />, { route: '/jobs?page=500' });
    await screen.findByText(/Page 500 of 1000/);
    await user.click(pageButton(/Next/));
    await screen.findByText(/Page 501 of 1000/);
    await user.click(pageButton(/Next/));
    await screen.findByText(/Page 502 of 1000/);
    first.unmount();

    renderWithProviders(<JobsPage />, { route: '/jobs?page=502&cursor=c-502' });
    await screen.findByText(/Page 502 of 1000/);
    await user.click(pageButton(/Previous/));
    expect(location()).toBe('/jobs?page=501&cursor=c-501');
  });

  it('offers the last page only while page numbers reach it, and no Previous it cannot read', async () => {
    const user = userEvent.setup();
    // 45 jobs: page 3 is within the first 10,000, read by its number
    renderWithProviders(<JobsPage />, { route: '/jobs' });
    await screen.findByText(/Page 2 of 3/);
    await user.click(pageButton(/Last page/));
    expect(location()).toBe('/jobs?page=3');
    cleanup();

    // 1,000 pages of 20: the last one is past the first 10,000 jobs
    deepListing();
    renderWithProviders(<JobsPage />, { route: '/jobs' });
    await screen.findByText(/Page 1 of 1000/);
    expect(within(pageNav()).queryByRole('button', { name: /Last page/ })).not.toBeInTheDocument();
    expect(pageButton(/Next/)).toBeEnabled();
    cleanup();

    // a deep page opened from a link: its page before is past the offset's reach and no cursor is known
    renderWithProviders(<JobsPage />, { route: '/jobs?page=700&cursor=c-700' });
    await screen.findByText(/Page 700 of 1000/);
    expect(pageButton(/Previous/)).toBeDisabled();
    expect(pageButton(/Next/)).toBeEnabled();
    expect(within(pageNav()).queryByRole('button', { name: /Last page/ })).not.toBeInTheDocument();
    await user.click(pageButton(/First page/));
    expect(location()).toBe('/jobs');
  });

  it('a filter, the sort or the page size go back to page 1 without the cursor', async () => {
    deepListing();
    const user = userEvent.setup();
    renderWithProviders(<JobsPage />, { route: '/jobs?status=running&page=600&cursor=c-600' });
    await screen.findByText(/Page 600 of 1000/);
    expect(lastParams()).toEqual(expect.objectContaining({ cursor: 'c-600' }));

    await user.click(screen.getByRole('checkbox', { name: 'dead' }));
    expect(location()).toBe('/jobs?status=running%2Cdead');
    await waitFor(() =>
      expect(lastParams()).toEqual(expect.objectContaining({ status: ['running', 'dead'], pageNumber: 1 })),
    );
    expect(lastParams()).not.toHaveProperty('cursor');
    await screen.findByText(/Page 1 of 1000/);

    await user.click(pageButton(/Next/));
    expect(location()).toBe('/jobs?status=running%2Cdead&page=2&cursor=c-2');
    await screen.findByText(/Page 2 of 1000/);
    await user.click(screen.getByRole('button', { name: /^Priority/ }));
    expect(location()).toBe('/jobs?status=running%2Cdead&sortBy=priority');
    await screen.findByText(/Page 1 of 1000/);

    await user.click(pageButton(/Next/));
    expect(location()).toContain('cursor=c-2');
    await screen.findByText(/Page 2 of 1000/);
    await user.selectOptions(screen.getByLabelText('Rows per page'), '50');
    expect(location()).toBe('/jobs?status=running%2Cdead&sortBy=priority&pageSize=50');
  });

  it('says when a page number is past what numbers reach and leads back to page 1', async () => {
    listJobs.mockRejectedValue(
      new ApiError(422, 'validation_error', 'request validation failed', [
        { field: 'pageNumber', message: 'pageNumber reaches the first 10000 jobs; follow nextCursor past them' },
      ]),
    );
    const user = userEvent.setup();
    renderWithProviders(<JobsPage />, { route: '/jobs?status=dead&page=900' });
    const note = await screen.findByTestId('jobs-page-unreachable');
    expect(note).toHaveTextContent('Page 900 is past the first 10,000 jobs');
    await user.click(within(note).getByRole('button', { name: 'Go to the first page' }));
    expect(location()).toBe('/jobs?status=dead');
  });

  it('has no serious accessibility violations', async () => {
    const { container } = renderWithProviders(<JobsPage />, { route: '/jobs' });
    await screen.findByTestId('jobs-table');
    expect(await seriousViolations(container)).toEqual([]);
  });
});

describe('<JobsPage> search, times and errors', () => {
  beforeEach(() => {
    sessionStorage.removeItem(FILTERS_OPEN_KEY);
    listJobs.mockReset();
    listJobTypes.mockReset();
    listJobTypes.mockResolvedValue({ types: builtinTypes() });
  });

  it('searches by an id prefix or a payload field from the URL, and refuses what the API would', async () => {
    listJobs.mockResolvedValue(page([jobSummary(A, 'running')]));
    const user = userEvent.setup();
    renderWithProviders(<JobsPage />, { route: '/jobs?status=running' });
    await screen.findByTestId('jobs-table');
    const box = screen.getByRole('searchbox', { name: 'Search jobs' });

    await user.type(box, '3f2a');
    await user.click(screen.getByRole('button', { name: 'Search' }));
    expect(await screen.findByRole('alert')).toHaveTextContent('at least 8 characters');
    expect(box).toHaveAttribute('aria-invalid', 'true');
    expect(location()).toBe('/jobs?status=running');

    await user.clear(box);
    await user.type(box, 'payload.orderId = 42{Enter}');
    expect(location()).toBe('/jobs?status=running&search=payload.orderId+%3D+42');
    await waitFor(() =>
      expect(lastParams()).toEqual(expect.objectContaining({ status: ['running'], search: 'payload.orderId = 42' })),
    );
    expect(screen.queryByRole('alert')).not.toBeInTheDocument();
    expect(screen.getByRole('heading', { name: /Filters \(2 active\)/ })).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Clear search' }));
    expect(location()).toBe('/jobs?status=running');
    expect(screen.getByRole('searchbox', { name: 'Search jobs' })).toHaveValue('');
  });

  it('says when a search matched more jobs than its total counts', async () => {
    listJobs.mockResolvedValue(jobsPage([jobSummary(A, 'running')], { totalItems: 10_000, totalPages: 500, totalCapped: true }));
    renderWithProviders(<JobsPage />, { route: '/jobs?search=payload.format%20%3D%20csv' });
    expect(await screen.findByTestId('jobs-search-capped')).toHaveTextContent('More than 10,000 jobs match this search');
  });

  it('says when nothing matches a search', async () => {
    listJobs.mockResolvedValue(jobsPage([], { totalPages: 0 }));
    renderWithProviders(<JobsPage />, { route: '/jobs?search=3f2a9c1b' });
    expect(await screen.findByText('No job matches this search.')).toBeInTheDocument();
    expect(screen.getByRole('searchbox', { name: 'Search jobs' })).toHaveValue('3f2a9c1b');
    expect(lastParams()).toEqual(expect.objectContaining({ search: '3f2a9c1b' }));
  });

  it('shows run time and relative times with the absolute time in a title', async () => {
    const created = new Date(Date.now() - 3 * 60_000).toISOString();
    listJobs.mockResolvedValue(
      jobsPage([
        jobSummary(A, 'succeeded', {
          createdAt: created,
          updatedAt: created,
          startedAt: '2030-01-01T10:00:00.000Z',
          finishedAt: '2030-01-01T10:00:01.500Z',
        }),
        jobSummary(B, 'queued'),
      ]),
    );
    renderWithProviders(<JobsPage />, { route: '/jobs' });
    const table = await screen.findByTestId('jobs-table');
    expect(within(table).getByRole('columnheader', { name: 'Duration' })).toBeInTheDocument();
    const [done, waiting] = within(table).getAllByTestId('job-row');
    expect(done).toHaveTextContent('1.50 s');
    expect(done).toHaveTextContent('3 min ago');
    const time = within(done!).getAllByText('3 min ago')[0]!;
    expect(time.tagName).toBe('TIME');
    expect(time).toHaveAttribute('dateTime', created);
    expect(time.getAttribute('title')).toMatch(/\d/);
    expect(within(waiting!).getAllByRole('cell')[6]).toHaveTextContent('—'); // never started
  });

  it('labels an error by its attempt, as current only while it is', async () => {
    listJobs.mockResolvedValue(
      jobsPage([
        jobSummary(A, 'succeeded', {
          attempt: 2,
          lastError: 'simulated failure',
          latestError: { attempt: 1, errorClass: 'SimulatedFailure', message: 'simulated failure', current: false },
        }),
        jobSummary(B, 'dead', {
          attempt: 3,
          lastError: 'boom',
          latestError: { attempt: 3, errorClass: 'RuntimeError', message: 'boom', current: true },
        }),
      ]),
    );
    const { container } = renderWithProviders(<JobsPage />, { route: '/jobs' });
    const table = await screen.findByTestId('jobs-table');
    const [recovered, dead] = within(table).getAllByTestId('job-row');
    const earlier = within(recovered!).getByTestId('job-error-earlier');
    expect(earlier).toHaveTextContent('earlier: attempt 1: SimulatedFailure');
    expect(earlier).toHaveClass('muted');
    expect(within(recovered!).queryByTestId('job-error-current')).not.toBeInTheDocument();
    const current = within(dead!).getByTestId('job-error-current');
    expect(current).toHaveTextContent('attempt 3: RuntimeError');
    expect(current).toHaveClass('danger-text');
    expect(current).toHaveAttribute('title', 'boom');
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('collapses the filters and remembers it in this tab', async () => {
    listJobs.mockResolvedValue(page([jobSummary(A, 'running')]));
    const user = userEvent.setup();
    const first = renderWithProviders(<JobsPage />, { route: '/jobs' });
    await screen.findByTestId('jobs-table');
    const toggle = screen.getByRole('button', { name: /Filters/ });
    expect(toggle).toHaveAttribute('aria-expanded', 'true');
    await user.click(toggle);
    expect(toggle).toHaveAttribute('aria-expanded', 'false');
    expect(screen.queryByRole('checkbox', { name: 'dead' })).not.toBeInTheDocument();
    first.unmount();

    renderWithProviders(<JobsPage />, { route: '/jobs' });
    await screen.findByTestId('jobs-table');
    expect(screen.getByRole('button', { name: /Filters/ })).toHaveAttribute('aria-expanded', 'false');
    await user.click(screen.getByRole('button', { name: /Filters/ }));
    expect(screen.getByRole('checkbox', { name: 'dead' })).toBeInTheDocument();
  });
});
