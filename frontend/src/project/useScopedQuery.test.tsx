/** A project's data is cached under its project and asked for in it: switching never shows another's. */
import { act, screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { requestProject, setChosenProject } from '../api/projectScope';
import { queryKeys } from '../api/queryKeys';
import { renderWithProviders } from '../test/utils';
import { useNavigate } from './navigation';
import { scopedKey, useScopedQuery } from './useScopedQuery';

/** Answers, for each request, the project it was sent in (as X-Project would carry it). */
function fakeApi() {
  const pending = new Map<string, (value: string) => void>();
  const asked: (string | null)[] = [];
  const fetcher = vi.fn(() => {
    const project = requestProject();
    asked.push(project);
    return new Promise<string>((resolve) => pending.set(project ?? 'all', () => resolve(`jobs of ${project ?? 'all'}`)));
  });
  return { fetcher, asked, answer: (project: string) => act(() => pending.get(project)?.('')) };
}

function Jobs({ fetcher }: { fetcher: () => Promise<string> }) {
  const jobs = useScopedQuery({ queryKey: queryKeys.jobList({ pageNumber: 1 }), queryFn: fetcher });
  const navigate = useNavigate();
  return (
    <>
      <output data-testid="shown">{jobs.data ?? 'loading'}</output>
      <button type="button" onClick={() => navigate('/jobs', { project: 'p-beta' })}>
        Beta
      </button>
      <button type="button" onClick={() => navigate('/jobs', { project: 'p-alpha' })}>
        Alpha
      </button>
    </>
  );
}

describe('useScopedQuery', () => {
  afterEach(() => setChosenProject(null));

  it('keys each project apart; the prefixes events invalidate still cover them', () => {
    expect(scopedKey(queryKeys.jobDetail('j1'), 'p-alpha')).toEqual(['jobs', 'detail', 'j1', { project: 'p-alpha' }]);
    expect(scopedKey(queryKeys.jobDetail('j1'), null)).toEqual(['jobs', 'detail', 'j1', { project: null }]);
    expect(scopedKey(queryKeys.jobDetail('j1'), 'p-alpha')).not.toEqual(scopedKey(queryKeys.jobDetail('j1'), 'p-beta'));
  });

  it('asks in the key’s project and never shows the other project’s answer after a switch', async () => {
    const user = userEvent.setup();
    const api = fakeApi();
    // what the app commits from the URL: here deliberately another project, which a query ignores
    setChosenProject('p-elsewhere');
    const { client } = renderWithProviders(<Jobs fetcher={api.fetcher} />, { route: '/jobs?project=p-alpha' });
    await waitFor(() => expect(api.asked).toEqual(['p-alpha']));
    api.answer('p-alpha');
    expect(await screen.findByText('jobs of p-alpha')).toBeInTheDocument();

    await user.click(screen.getByRole('button', { name: 'Beta' }));
    // Beta's answer has not come: Alpha's is not shown meanwhile
    expect(screen.getByTestId('shown')).toHaveTextContent('loading');
    await waitFor(() => expect(api.asked).toEqual(['p-alpha', 'p-beta']));
    api.answer('p-beta');
    expect(await screen.findByText('jobs of p-beta')).toBeInTheDocument();

    const keys = client
      .getQueryCache()
      .findAll({ queryKey: queryKeys.jobLists })
      .map((query) => query.queryKey);
    expect(keys).toEqual([
      scopedKey(queryKeys.jobList({ pageNumber: 1 }), 'p-alpha'),
      scopedKey(queryKeys.jobList({ pageNumber: 1 }), 'p-beta'),
    ]);
    // back to Alpha: its own cached answer (then read again), never Beta's
    await user.click(screen.getByRole('button', { name: 'Alpha' }));
    expect(screen.getByTestId('shown')).toHaveTextContent('jobs of p-alpha');
  });
});
