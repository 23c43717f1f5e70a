import { describe, expect, it } from 'vitest';
import { depthRows, historySummary, sparkPath, UNFINISHED_STATUSES } from './queueDepth';

describe('depthRows', () => {
  it('gives a row per status in the order of the job lifecycle, with its jobs per priority', () => {
    const rows = depthRows([
      { status: 'running', priority: 3, count: 1 },
      { status: 'queued', priority: 1, count: 2 },
      { status: 'pending', priority: 2, count: 5 },
      { status: 'queued', priority: 3, count: 4 },
    ]);
    expect(rows).toEqual([
      { status: 'pending', counts: { 2: 5 }, total: 5 },
      { status: 'queued', counts: { 1: 2, 3: 4 }, total: 6 },
      { status: 'running', counts: { 3: 1 }, total: 1 },
    ]);
    expect(depthRows([])).toEqual([]);
  });

  it('knows every unfinished status, failed (awaiting its retry) included', () => {
    expect(UNFINISHED_STATUSES).toEqual(['pending', 'blocked', 'scheduled', 'queued', 'running', 'failed']);
  });
});

describe('historySummary', () => {
  it('says the most and the last sampled of each line, and the minutes not sampled', () => {
    expect(historySummary('emails', [null, 3, 9, 4], [null, 0, 2, 1])).toBe(
      'Last 4 minutes of emails: waiting up to 9, 4 at the last sample; running up to 2, 1 at the last sample. ' +
        '1 of the minutes were not sampled.',
    );
    expect(historySummary('emails', [1, null], [0, null])).toMatch(/waiting up to 1, 1 at the last sample/);
    expect(historySummary('idle', [null, null], [null, null])).toBe('Last 2 minutes of idle: not sampled yet.');
  });
});

describe('sparkPath', () => {
  it('draws 0 at the bottom and the largest value at the top, left to right', () => {
    expect(sparkPath([0, 5, 10], 10, 100, 20)).toBe('M0,20L50,10L100,0');
  });

  it('leaves a gap where a minute was not sampled, and shows a lone point as a short stroke', () => {
    expect(sparkPath([2, 2, null, 4, null], 4, 40, 10)).toBe('M0,5L10,5M29,0L31,0');
    expect(sparkPath([null, null], 0, 40, 10)).toBe('');
  });

  it('draws all zeros on the bottom line', () => {
    expect(sparkPath([0, 0], 0, 10, 10)).toBe('M0,10L10,10');
  });
});
