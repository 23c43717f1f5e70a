/** The store health card on the overview: its warnings for admins, nothing for others. */
import { act, screen, within } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../api/endpoints';
import { authStore } from '../api/instance';
import type { StoreHealth } from '../api/types';
import { fakeTokens, renderWithProviders, seriousViolations } from '../test/utils';
import { StoreHealthCard } from './StoreHealthCard';

vi.mock('../api/endpoints', () => ({ getStoreHealth: vi.fn() }));

const getStoreHealth = vi.mocked(endpoints.getStoreHealth);

const TABLE = {
  liveRows: 10,
  deadRows: 0,
  autovacuum: true,
  lastVacuumAt: null,
  lastAnalyzeAt: '2026-12-07T05:00:00Z',
  overThreshold: false,
};

function health(overrides: Partial<StoreHealth> = {}): StoreHealth {
  return {
    verdict: 'ok',
    autovacuum: true,
    threshold: { deadRows: 100_000, deadRatio: 0.2 },
    warnings: [],
    tables: [
      { ...TABLE, table: 'jobs', deadRows: 12, liveRows: 5_000 },
      { ...TABLE, table: 'workers' },
    ],
    checkedAt: '2026-12-07T06:00:00Z',
    ...overrides,
  };
}

const AUTOVACUUM_OFF = "PostgreSQL's autovacuum is off: nothing reclaims the dead rows.";
const DEAD_ROWS = 'Too many dead rows in jobs (250,000 dead rows): reads slow down.';

describe('<StoreHealthCard>', () => {
  beforeEach(() => {
    getStoreHealth.mockReset();
    act(() => authStore.getState().login(fakeTokens({ role: 'admin', email: 'admin@test.com' })));
  });
  afterEach(() => act(() => authStore.getState().logout()));

  it('warns an admin when autovacuum is off and a table holds too many dead rows', async () => {
    getStoreHealth.mockResolvedValue(
      health({
        verdict: 'warning',
        autovacuum: false,
        warnings: [
          { code: 'autovacuum_off', message: AUTOVACUUM_OFF, tables: ['jobs', 'workers'] },
          { code: 'dead_rows', message: DEAD_ROWS, tables: ['jobs'] },
        ],
        tables: [
          { ...TABLE, table: 'jobs', deadRows: 250_000, liveRows: 1_000, autovacuum: false, overThreshold: true },
          { ...TABLE, table: 'workers', autovacuum: false },
        ],
      }),
    );
    const { container } = renderWithProviders(<StoreHealthCard />);
    const card = await screen.findByTestId('store-health');
    await screen.findByRole('heading', { name: 'Job store needs attention' });
    expect(card).toHaveAttribute('data-verdict', 'warning');
    expect(card).toHaveClass('card-warn');
    const warnings = within(screen.getByTestId('store-warnings')).getAllByRole('listitem');
    expect(warnings.map((li) => li.textContent)).toEqual([AUTOVACUUM_OFF, DEAD_ROWS]);
    expect(screen.getByTestId('store-autovacuum')).toHaveTextContent('off');
    expect(card).toHaveTextContent('250,000 dead rows in the job store, most in jobs (250,000)');
    expect(card).toHaveTextContent('from 100,000 dead rows when they are over 20.0 % of its live ones');
    // the tables, most dead rows first, each cell named by its column (a card on a phone)
    const [jobs] = within(card).getAllByRole('row').slice(1);
    expect(jobs).toHaveAttribute('data-over-threshold', 'true');
    expect(within(jobs!).getByText('250,000')).toHaveAttribute('data-label', 'Dead rows');
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('says the store is healthy in one quiet card when nothing stands', async () => {
    getStoreHealth.mockResolvedValue(health());
    renderWithProviders(<StoreHealthCard />);
    await screen.findByRole('heading', { name: 'Job store is healthy' });
    const card = screen.getByTestId('store-health');
    expect(card).toHaveAttribute('data-verdict', 'ok');
    expect(card).not.toHaveClass('card-warn');
    expect(screen.queryByTestId('store-warnings')).toBeNull();
    expect(screen.getByTestId('store-autovacuum')).toHaveTextContent('on');
  });

  it('shows nothing to a user and asks nothing', () => {
    act(() => authStore.getState().login(fakeTokens({ role: 'user' })));
    const { container } = renderWithProviders(<StoreHealthCard />);
    expect(container.querySelector('[data-testid="store-health"]')).toBeNull();
    expect(getStoreHealth).not.toHaveBeenCalled();
  });
});
