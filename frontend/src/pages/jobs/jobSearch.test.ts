import { describe, expect, it } from 'vitest';
import { filtersFromSearch, filtersToSearch, toListParams } from '../../lib/jobFilters';
import { searchProblem } from './jobSearch';

describe('the jobs search text', () => {
  it.each(['', '3f2a9c1b', '3F2A9C1B-77', '3f2a9c1b-77aa-4bcd-8eef-0123456789ab', 'payload.to = a@b.c', 'payload.n=42'])(
    'accepts %j',
    (text) => expect(searchProblem(text)).toBeNull(),
  );

  it.each([
    ['3f2a9c1', 'at least 8 characters'],
    ['3f2a-9c1b', 'job id prefix'],
    ['not an id', 'job id prefix'],
    ['3f2a9c1b77aa4bcd8eef0123456789ab0', 'job id prefix'],
    ['payload.customer.id = 7', 'top-level'],
    ['payload.to =', 'Give a value'],
    ['payload to = x', 'payload.field = value'],
  ])('refuses %j', (text, message) => expect(searchProblem(text)).toContain(message));

  it('travels in the URL and to the API', () => {
    const filters = filtersFromSearch(new URLSearchParams('search=%20payload.to%20%3D%20a%40b.c%20&type=email'));
    expect(filters.search).toBe('payload.to = a@b.c');
    expect(filtersToSearch(filters).toString()).toBe('type=email&search=payload.to+%3D+a%40b.c');
    expect(toListParams(filters)).toEqual(expect.objectContaining({ search: 'payload.to = a@b.c', type: 'email' }));
    expect(filtersFromSearch(new URLSearchParams(`search=${'x'.repeat(1_001)}`)).search).toBe('');
  });
});
