/** The Queues page's "Usage": a project's totals and days over a range, gaps as zeros. */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import type { Usage, UsageDay } from '../../api/types';
import { ALPHA, teamAccess } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { UsagePanel } from './UsagePanel';

vi.mock('../../api/endpoints', () => ({
  getUsage: vi.fn(),
}));

const getUsage = vi.mocked(endpoints.getUsage);

function day(date: string, counts: Partial<UsageDay> = {}): UsageDay {
  return { projectId: ALPHA, day: date, submitted: 0, attempts: 0, runSeconds: 0, succeeded: 0, dead: 0, ...counts };
}

/** The API's answer for the range asked: the days given (those inside it) and their totals. */
function serve(days: UsageDay[]) {
  getUsage.mockImplementation(({ from = '', to = '' }) => {
    const items = days.filter((d) => d.day >= from && d.day <= to);
    const sum = (key: 'submitted' | 'attempts' | 'runSeconds' | 'succeeded' | 'dead') =>
      items.reduce((n, d) => n + d[key], 0);
    const answer: Usage = {
      firstDay: from,
      lastDay: to,
      items,
      totals: {
        submitted: sum('submitted'),
        attempts: sum('attempts'),
        runSeconds: sum('runSeconds'),
        succeeded: sum('succeeded'),
        dead: sum('dead'),
      },
    };
    return Promise.resolve(answer);
  });
}

function render() {
  return renderWithProviders(<UsagePanel />, {
    route: `/queues?project=${ALPHA}`,
    access: teamAccess({ role: 'viewer', projectId: ALPHA }),
  });
}

const value = (testId: string) => within(screen.getByTestId(testId)).getByRole('definition');

describe('<UsagePanel>', () => {
  beforeEach(() => {
    // only the clock is faked: "today" is 10 January 2030 (UTC) whatever the machine's zone
    vi.useFakeTimers({ toFake: ['Date'] });
    vi.setSystemTime(new Date('2030-01-10T12:00:00Z'));
    getUsage.mockReset();
    serve([
      day('2030-01-08', { submitted: 1200, attempts: 1300, runSeconds: 7260.4, succeeded: 1150, dead: 3 }),
      day('2030-01-10', { submitted: 5, attempts: 5, runSeconds: 12.5, succeeded: 4, dead: 1 }),
      day('2029-11-20', { submitted: 40, attempts: 41, runSeconds: 100, succeeded: 40 }),
    ]);
  });

  afterEach(() => {
    vi.useRealTimers();
  });

  it("shows the last 30 days' totals, with run time for people", async () => {
    const { container } = render();
    expect(within(screen.getByTestId('usage')).getByRole('heading', { name: 'Usage' })).toBeInTheDocument();
    await waitFor(() => expect(value('usage-submitted')).toHaveTextContent(/^1[,.\s\u202f]?205$/));
    expect(getUsage).toHaveBeenCalledWith({ projectId: ALPHA, from: '2029-12-12', to: '2030-01-10' }, expect.anything());
    expect(screen.getByRole('radio', { name: 'Last 30 days' })).toBeChecked();
    expect(value('usage-attempts')).toHaveTextContent(/^1[,.\s\u202f]?305$/);
    expect(value('usage-run-time')).toHaveTextContent('2 h 1 min');
    expect(value('usage-succeeded')).toHaveTextContent(/^1[,.\s\u202f]?154$/);
    expect(value('usage-dead')).toHaveTextContent(/^4$/);
    expect(screen.getByTestId('usage-chart')).toHaveAccessibleName(
      'Bar chart: 1205 submitted, 1154 succeeded, 4 dead in 30 days',
    );
    expect(screen.queryByTestId('usage-empty')).toBeNull();
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('lists every day of the range in the table, the days without activity as zeros', async () => {
    render();
    const table = await screen.findByTestId('usage-table');
    const rows = within(table).getAllByRole('row').slice(1); // under the header row
    expect(rows).toHaveLength(30);
    expect(rows[0]).toHaveAttribute('data-day', '2029-12-12');
    expect(rows.at(-1)).toHaveAttribute('data-day', '2030-01-10');
    const cells = (date: string) =>
      within(rows.find((r) => r.dataset.day === date)!)
        .getAllByRole('cell')
        .map((cell) => cell.textContent);
    expect(cells('2030-01-09')).toEqual(['0', '0', '0 s', '0', '0']);
    expect(cells('2029-12-31')).toEqual(['0', '0', '0 s', '0', '0']);
    expect(cells('2030-01-10')).toEqual(['5', '5', '12.5 s', '4', '1']);
    expect(within(table).getByRole('columnheader', { name: 'Day (UTC)' })).toBeInTheDocument();
    expect(screen.getByRole('region', { name: 'Usage per day' })).toContainElement(table);
  });

  it('reads the range picked again, from its first day to today', async () => {
    const user = userEvent.setup();
    render();
    await waitFor(() => expect(value('usage-submitted')).toHaveTextContent(/^1[,.\s\u202f]?205$/));

    await user.click(screen.getByRole('radio', { name: 'Last 7 days' }));
    await waitFor(() =>
      expect(getUsage).toHaveBeenLastCalledWith({ projectId: ALPHA, from: '2030-01-04', to: '2030-01-10' }, expect.anything()),
    );
    await waitFor(() => expect(screen.getByTestId('usage-range')).toHaveAttribute('data-from', '2030-01-04'));
    expect(within(screen.getByTestId('usage-table')).getAllByRole('row')).toHaveLength(1 + 7);

    await user.click(screen.getByRole('radio', { name: 'Last 90 days' }));
    await waitFor(() =>
      expect(getUsage).toHaveBeenLastCalledWith({ projectId: ALPHA, from: '2029-10-13', to: '2030-01-10' }, expect.anything()),
    );
    await waitFor(() => expect(value('usage-submitted')).toHaveTextContent(/^1[,.\s\u202f]?245$/));
    expect(within(screen.getByTestId('usage-table')).getAllByRole('row')).toHaveLength(1 + 90);
    expect(screen.getByRole('radio', { name: 'Last 90 days' })).toBeChecked();
  });

  it('says so when the range has no activity, with zero totals and no chart', async () => {
    serve([]);
    const { container } = render();
    expect(await screen.findByTestId('usage-empty')).toHaveTextContent('No jobs submitted or run in these 30 days.');
    expect(value('usage-submitted')).toHaveTextContent(/^0$/);
    expect(value('usage-run-time')).toHaveTextContent(/^0 s$/);
    expect(screen.queryByTestId('usage-chart')).toBeNull();
    expect(screen.queryByTestId('usage-table')).toBeNull();
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('asks for a project when all projects are shown', () => {
    renderWithProviders(<UsagePanel />, { route: '/queues', access: teamAccess({ role: 'admin' }) });
    expect(screen.getByTestId('usage-choose')).toHaveTextContent('choose one');
    expect(getUsage).not.toHaveBeenCalled();
  });
});
