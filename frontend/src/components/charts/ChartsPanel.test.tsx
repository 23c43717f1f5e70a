import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import type { ChartPoint, ChartRange, ChartSeries } from '../../api/types';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { chartRows, windowCaption } from './chartRows';
import { ChartsPanel } from './ChartsPanel';

vi.mock('../../api/endpoints', () => ({ getCharts: vi.fn() }));
const getCharts = vi.mocked(endpoints.getCharts);

const STEPS: Record<ChartRange, [number, number]> = {
  '15m': [60, 15],
  '1h': [60, 60],
  '6h': [300, 72],
  '24h': [900, 96],
  '7d': [3600, 168],
};

function point(start: Date, overrides: Partial<ChartPoint> = {}): ChartPoint {
  return {
    start: start.toISOString(),
    succeeded: 0,
    dead: 0,
    cancelled: 0,
    waiting: { high: 0, medium: 0, low: 0 },
    running: 0,
    longestWaitSeconds: { high: 0, medium: 0, low: 0 },
    busySlots: null,
    slots: null,
    ...overrides,
  };
}

function series(range: ChartRange, extra: Partial<ChartSeries> = {}, fill: Partial<ChartPoint> = {}): ChartSeries {
  const [bucketSeconds, points] = STEPS[range];
  const first = new Date(Date.UTC(2026, 11, 7, 6, 0) - (points - 1) * bucketSeconds * 1000);
  return {
    range,
    bucketSeconds,
    first: first.toISOString(),
    points: Array.from({ length: points }, (_, i) => point(new Date(first.getTime() + i * bucketSeconds * 1000), fill)),
    projectId: null,
    queue: null,
    grafanaUrl: null,
    rabbitmqConsoleUrl: null,
    ...extra,
  };
}

describe('chartRows', () => {
  it('turns a window’s finishes into a rate per minute and keeps unsampled windows as gaps', () => {
    const data = series('6h');
    data.points[0] = point(new Date(data.first), {
      succeeded: 50,
      dead: 5,
      waiting: null,
      running: null,
      longestWaitSeconds: null,
      busySlots: 3,
      slots: 12,
    });
    const [row] = chartRows(data);
    expect(row).toMatchObject({ succeededPerMinute: 10, deadPerMinute: 1, waitingHigh: null, waitHigh: null });
    expect(row?.utilisation).toBe(25);
    expect(chartRows(series('1h'))[0]?.utilisation).toBeNull();
  });

  it('names the window and its step', () => {
    expect(windowCaption(series('15m'))).toMatch(/^From .+ to .+, a point per minute$/);
    expect(windowCaption(series('24h'))).toMatch(/a point per 15 minutes$/);
    expect(windowCaption(series('7d'))).toMatch(/a point per hour$/);
  });
});

describe('<ChartsPanel>', () => {
  beforeEach(() => {
    getCharts.mockReset();
    getCharts.mockImplementation((range: ChartRange) => Promise.resolve(series(range)));
  });

  it('reads the chosen range and shows its window', async () => {
    const { container } = renderWithProviders(<ChartsPanel title="Activity" />);
    const caption = await screen.findByTestId('charts-window');
    expect(caption).toHaveAttribute('data-points', '60');
    expect(getCharts).toHaveBeenLastCalledWith('1h', undefined, expect.anything());
    expect(await seriousViolations(container)).toEqual([]);
    for (const [label, range] of [
      ['15 min', '15m'],
      ['6 hours', '6h'],
      ['24 hours', '24h'],
      ['7 days', '7d'],
    ] as const) {
      fireEvent.click(screen.getByRole('radio', { name: label }));
      await waitFor(() => expect(screen.getByTestId('charts-window')).toHaveAttribute('data-range', range));
      const [bucketSeconds, points] = STEPS[range];
      expect(screen.getByTestId('charts-window')).toHaveAttribute('data-points', String(points));
      expect(screen.getByTestId('charts-window')).toHaveAttribute('data-bucket-seconds', String(bucketSeconds));
      expect(getCharts).toHaveBeenLastCalledWith(range, undefined, expect.anything());
    }
    // no worker figures (not an admin's view), no links configured
    expect(screen.queryByTestId('chart-utilisation')).toBeNull();
    expect(screen.queryByTestId('charts-links')).toBeNull();
  });

  it('charts one queue, with the workers’ utilisation and the links the API gives', async () => {
    getCharts.mockImplementation((range: ChartRange) =>
      Promise.resolve(
        series(
          range,
          { grafanaUrl: 'http://grafana.test/d/x', rabbitmqConsoleUrl: 'http://rabbit.test/' },
          { busySlots: 2, slots: 4 },
        ),
      ),
    );
    renderWithProviders(<ChartsPanel title="This queue" queueId="q-1" initialRange="15m" />);
    expect(await screen.findByTestId('chart-utilisation')).toBeInTheDocument();
    expect(getCharts).toHaveBeenLastCalledWith('15m', 'q-1', expect.anything());
    const links = screen.getByTestId('charts-links');
    expect(within(links).getByRole('link', { name: 'View in Grafana' })).toHaveAttribute('href', 'http://grafana.test/d/x');
    expect(within(links).getByRole('link', { name: 'RabbitMQ console' })).toHaveAttribute('href', 'http://rabbit.test/');
  });
});
