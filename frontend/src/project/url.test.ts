import { describe, expect, it } from 'vitest';
import { keepProject, projectFromSearch, switchTarget } from './url';

describe('the project in the URL', () => {
  it('reads ?project=, none when empty', () => {
    expect(projectFromSearch('?project=p1&tab=letters')).toBe('p1');
    expect(projectFromSearch(new URLSearchParams('project=%20p1%20'))).toBe('p1');
    expect(projectFromSearch('?project=')).toBeNull();
    expect(projectFromSearch('')).toBeNull();
    expect(projectFromSearch(`?project=${'x'.repeat(201)}`)).toBeNull();
  });

  it('keeps the project on a link that names none, and leaves one that does', () => {
    expect(keepProject('/jobs', 'p1')).toBe('/jobs?project=p1');
    expect(keepProject('/jobs?status=dead#top', 'p1')).toBe('/jobs?status=dead&project=p1#top');
    expect(keepProject('/jobs?project=p2', 'p1')).toBe('/jobs?project=p2');
    expect(keepProject('/jobs?status=dead', null)).toBe('/jobs?status=dead');
    expect(keepProject('?tab=audit', 'p1')).toBe('?tab=audit&project=p1');
    expect(keepProject({ pathname: '/jobs', search: '?page=2' }, 'p1')).toEqual({ pathname: '/jobs', search: '?page=2&project=p1' });
    expect(keepProject({ pathname: '/jobs' }, null)).toEqual({ pathname: '/jobs' });
  });

  it('switches on the same page, from its first page; a job goes to the list, keys to the new project', () => {
    const at = (path: string) => {
      const [pathname = '', search = ''] = path.split('?');
      return { pathname, search: search ? `?${search}` : '', hash: '' };
    };
    expect(switchTarget(at('/jobs?status=dead&page=3&cursor=c&project=p1'), 'p2')).toBe('/jobs?status=dead&project=p2');
    expect(switchTarget(at('/jobs?project=p1'), null)).toBe('/jobs');
    expect(switchTarget(at('/jobs/abc?project=p1'), 'p2')).toBe('/jobs?project=p2');
    expect(switchTarget(at('/dead-letters?tab=letters&letter=l1'), 'p2')).toBe('/dead-letters?tab=letters&project=p2');
    expect(switchTarget(at('/projects/p1/api-keys?project=p1'), 'p2')).toBe('/projects/p2/api-keys?project=p2');
    expect(switchTarget(at('/projects/p1/api-keys?project=p1'), null)).toBe('/projects/p1/api-keys');
    expect(switchTarget(at('/organizations/o1'), 'p2')).toBe('/organizations/o1?project=p2');
  });
});
