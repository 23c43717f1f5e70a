import { render, screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { CronPreview } from '../components/CronPreview';
import { cronError, isValidTimeZone, nextFireTimes, normalizeCron } from './cron';

const NOW = new Date('2024-01-15T10:00:00Z');

describe('cron helpers', () => {
  it('requires exactly five fields, like the dashboard', () => {
    expect(cronError('*/5 * * * *')).toBeNull();
    expect(cronError('* * * *')).toMatch(/exactly 5 fields.*got 4/);
    expect(cronError('0 * * * * *')).toMatch(/got 6/);
    expect(cronError('61 * * * *')).toMatch(/Invalid cron/);
    expect(normalizeCron('  0   3 * *   1-5 ')).toBe('0 3 * * 1-5');
  });

  it('knows IANA zones', () => {
    expect(isValidTimeZone('Europe/Berlin')).toBe(true);
    expect(isValidTimeZone('Mars/Olympus')).toBe(false);
    expect(isValidTimeZone('')).toBe(false);
  });

  it('computes fire times on the wall clock of the chosen zone', () => {
    const berlin = nextFireTimes('0 3 * * *', 'Europe/Berlin', 3, NOW).map((d) => d.toISOString());
    expect(berlin).toEqual(['2024-01-16T02:00:00.000Z', '2024-01-17T02:00:00.000Z', '2024-01-18T02:00:00.000Z']);
    const newYork = nextFireTimes('0 3 * * *', 'America/New_York', 1, NOW).map((d) => d.toISOString());
    expect(newYork).toEqual(['2024-01-16T08:00:00.000Z']);
  });

  it('fires strictly after now and treats day-of-month OR day-of-week', () => {
    expect(nextFireTimes('0 10 * * *', 'UTC', 1, NOW)[0]?.toISOString()).toBe('2024-01-16T10:00:00.000Z');
    // the 1st of the month or any Monday (croniter semantics)
    const times = nextFireTimes('0 9 1 * 1', 'UTC', 4, new Date('2024-01-25T00:00:00Z')).map((d) => d.toISOString());
    expect(times).toEqual([
      '2024-01-29T09:00:00.000Z',
      '2024-02-01T09:00:00.000Z',
      '2024-02-05T09:00:00.000Z',
      '2024-02-12T09:00:00.000Z',
    ]);
  });

  it('follows summer time in the zone', () => {
    const times = nextFireTimes('0 12 * * *', 'Europe/Berlin', 2, new Date('2024-03-30T12:00:00Z')).map((d) =>
      d.toISOString(),
    );
    expect(times).toEqual(['2024-03-31T10:00:00.000Z', '2024-04-01T10:00:00.000Z']);
  });

  it('throws on invalid input', () => {
    expect(() => nextFireTimes('nope', 'UTC')).toThrow(/exactly 5 fields/);
    expect(() => nextFireTimes('* * * * *', 'Nowhere/Land')).toThrow(/Unknown time zone/);
  });
});

describe('<CronPreview>', () => {
  it('lists the next five fire times', () => {
    render(<CronPreview cron="30 8 * * 1" timeZone="Europe/Berlin" now={NOW} />);
    const items = screen.getAllByRole('listitem');
    expect(items).toHaveLength(5);
    expect(items.map((item) => item.getAttribute('data-fire-time'))).toEqual([
      '2024-01-22T07:30:00.000Z',
      '2024-01-29T07:30:00.000Z',
      '2024-02-05T07:30:00.000Z',
      '2024-02-12T07:30:00.000Z',
      '2024-02-19T07:30:00.000Z',
    ]);
    expect(screen.getByRole('heading', { name: 'Next 5 fire times' })).toBeInTheDocument();
  });

  it('explains an invalid expression instead of listing times', () => {
    render(<CronPreview cron="0 3 * *" timeZone="UTC" now={NOW} />);
    expect(screen.queryAllByRole('listitem')).toHaveLength(0);
    expect(screen.getByText(/exactly 5 fields/)).toBeInTheDocument();
  });
});
