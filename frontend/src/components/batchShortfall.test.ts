/** Why a batch is short of recorded jobs, from the submission service's count and the job store's. */
import { describe, expect, it } from 'vitest';
import { idPrefixProblem } from '../lib/idPrefix';
import { batchShortfall, STUCK_AFTER_MS } from './batchShortfall';

const CREATED = '2030-01-01T00:00:00Z';
const at = (ms: number) => Date.parse(CREATED) + ms;

describe('batchShortfall', () => {
  it('says nothing of a batch whose every job is recorded', () => {
    expect(batchShortfall({ total: 3, recorded: 3, createdAt: CREATED }, { size: 3, published: 3 })).toBeNull();
  });

  it('names the members still in the outbox and those on their way', () => {
    const short = batchShortfall({ total: 100, recorded: 90, createdAt: CREATED }, { size: 100, published: 95 }, at(1_000));
    expect(short?.missing).toBe(10);
    expect(short?.reason).toBe(
      "5 jobs still in the submission service's outbox, not published yet (the relay retries them; a broker outage holds them there); 5 jobs published and on their way to the scheduler.",
    );
  });

  it('points at the poison messages when published members stay unrecorded', () => {
    const short = batchShortfall({ total: 100, recorded: 99, createdAt: CREATED }, { size: 100, published: 100 }, at(STUCK_AFTER_MS + 60_000));
    expect(short?.reason).toMatch(/^1 job published but not recorded by the scheduler after 6 min; .*poison messages\.$/);
  });

  it('explains a batch the submission service no longer keeps, and one it has not answered for', () => {
    expect(batchShortfall({ total: 2, recorded: 1, createdAt: CREATED }, null)?.reason).toMatch(/past its retention.*poison messages/);
    expect(batchShortfall({ total: 2, recorded: 1, createdAt: CREATED }, undefined)?.reason).toBe('1 job not recorded by the scheduler yet.');
  });
});

describe('idPrefixProblem', () => {
  it('takes 8 or more hex digits or a whole id, and says why not otherwise', () => {
    expect(idPrefixProblem('')).toBeNull();
    expect(idPrefixProblem(' 1a2b3c4d ')).toBeNull();
    expect(idPrefixProblem('1A2B3C4D-0000-4000-8000-000000000001')).toBeNull();
    expect(idPrefixProblem('1a2b3c4')).toBe('Type at least 8 characters of the id, as shown, or the whole id');
    expect(idPrefixProblem('batch-42x')).toBe('An id has only the characters 0-9, a-f and dashes');
    expect(idPrefixProblem('1'.repeat(33))).toBe('Longer than an id');
  });
});
