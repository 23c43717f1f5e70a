import { describe, expect, it } from 'vitest';
import { fillUsageDays, formatRunTime, usageRange } from './usage';

const day = (date: string, submitted: number, projectId = 'p1') => ({
  projectId,
  day: date,
  submitted,
  attempts: submitted,
  runSeconds: submitted * 2,
  succeeded: submitted,
  dead: 0,
});

describe('usage', () => {
  it('ends the range today in UTC, today included', () => {
    // 23:30 in New York is already the next day in UTC
    const now = Date.parse('2030-03-01T04:30:00Z');
    expect(usageRange(7, now)).toEqual({ from: '2030-02-23', to: '2030-03-01' });
    expect(usageRange(1, now)).toEqual({ from: '2030-03-01', to: '2030-03-01' });
  });

  it('fills the days without activity with zeros, across a month end, and sums projects', () => {
    const points = fillUsageDays('2030-01-30', '2030-02-02', [
      day('2030-01-31', 3),
      day('2030-01-31', 2, 'p2'),
      day('2030-02-02', 1),
      day('2030-03-01', 9), // not in the range
    ]);
    expect(points.map((p) => [p.day, p.submitted, p.runSeconds])).toEqual([
      ['2030-01-30', 0, 0],
      ['2030-01-31', 5, 10],
      ['2030-02-01', 0, 0],
      ['2030-02-02', 1, 2],
    ]);
    expect(fillUsageDays('2030-01-02', '2030-01-01', [])).toEqual([]);
    expect(fillUsageDays('not a day', '2030-01-01', [])).toEqual([]);
  });

  it('formats run time for people', () => {
    expect(formatRunTime(0)).toBe('0 s');
    expect(formatRunTime(4.24)).toBe('4.2 s');
    expect(formatRunTime(59.97)).toBe('1 min 0 s');
    expect(formatRunTime(725)).toBe('12 min 5 s');
    expect(formatRunTime(12_000)).toBe('3 h 20 min');
    expect(formatRunTime(187_200)).toBe('2 d 4 h');
  });
});
