import { partialMatchKey, QueryClientProvider, useQuery } from '@tanstack/react-query';
import { act, render, screen, waitFor } from '@testing-library/react';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { queryKeys } from '../api/queryKeys';
import type { JobsPage } from '../api/types';
import { createAuthStore } from '../auth/store';
import { scopedKey } from '../project/useScopedQuery';
import { FakeSocket } from '../test/fakeSocket';
import { jobSummary, jobsPage } from '../test/jobs';
import { fakeTokens, testQueryClient } from '../test/utils';
import { usePollWhileOffline } from './context';
import { LiveProvider } from './LiveProvider';
import type { JobDetail } from '../api/types';
import { affectedKeys, isAggregate, patchJobCaches } from './cache';

const JOB = 'aaaaaaaa-0000-4000-8000-000000000001';
const listKey = queryKeys.jobList({ pageNumber: 1 });

function seededPage(): JobsPage {
  return jobsPage([
    jobSummary(JOB, 'queued', { priority: 2, createdAt: '2030-01-01T00:00:00Z', updatedAt: '2030-01-01T00:00:00Z' }),
  ]);
}

function PollProbe() {
  const interval = usePollWhileOffline(5_000);
  return <output data-testid="poll">{String(interval)}</output>;
}

function JobsProbe({ fetcher }: { fetcher: () => Promise<JobsPage> }) {
  const query = useQuery({ queryKey: listKey, queryFn: fetcher, staleTime: Infinity });
  return <output data-testid="status">{query.data?.items[0]?.status ?? 'none'}</output>;
}

function setup() {
  const auth = createAuthStore({ refreshRequest: vi.fn(), storage: null });
  auth.getState().login(fakeTokens());
  const client = testQueryClient();
  const fetcher = vi.fn(() => Promise.resolve(seededPage()));
  render(
    <QueryClientProvider client={client}>
      <LiveProvider auth={auth} createSocket={(url) => new FakeSocket(url)} throttleMs={50}>
        <PollProbe />
        <JobsProbe fetcher={fetcher} />
      </LiveProvider>
    </QueryClientProvider>,
  );
  return { auth, client, fetcher };
}

describe('<LiveProvider>', () => {
  beforeEach(() => {
    FakeSocket.all = [];
  });
  afterEach(() => {
    FakeSocket.all = [];
  });

  it('polls only while the socket is down', async () => {
    setup();
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    expect(screen.getByTestId('poll')).toHaveTextContent('5000');
    act(() => FakeSocket.all[0]!.open());
    expect(screen.getByTestId('poll')).toHaveTextContent('false');
    act(() => FakeSocket.all[0]!.drop(1006));
    expect(screen.getByTestId('poll')).toHaveTextContent('5000');
  });

  it('patches cached rows at once and refetches affected queries, throttled', async () => {
    const { fetcher, client } = setup();
    await waitFor(() => expect(screen.getByTestId('status')).toHaveTextContent('queued'));
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    act(() => FakeSocket.all[0]!.open());
    // the (re)connect refetches everything once
    await waitFor(() => expect(fetcher).toHaveBeenCalledTimes(2));
    fetcher.mockImplementation(() => {
      const page = seededPage();
      page.items[0]!.status = 'succeeded';
      return Promise.resolve(page);
    });
    const change = (to: string) => ({
      jobId: JOB,
      attempt: 1,
      fromStatus: 'queued',
      toStatus: to,
      reason: 'x',
      jobType: 'email',
      at: '2030-01-01T00:00:01Z',
    });
    act(() => {
      FakeSocket.all[0]!.receive({ type: 'job.changes', changes: [change('running')] });
      FakeSocket.all[0]!.receive({ type: 'job.changes', changes: [change('succeeded')] });
    });
    // patched without a request ...
    expect(client.getQueryData<JobsPage>(listKey)?.items[0]?.status).toBe('succeeded');
    expect(fetcher).toHaveBeenCalledTimes(2);
    await waitFor(() => expect(screen.getByTestId('status')).toHaveTextContent('succeeded'));
    // ... then one refetch for the burst
    await waitFor(() => expect(fetcher).toHaveBeenCalledTimes(3));
    await new Promise((r) => setTimeout(r, 120));
    expect(fetcher).toHaveBeenCalledTimes(3);
  });

  it('connects to the project followed, and again to the next one', async () => {
    const auth = createAuthStore({ refreshRequest: vi.fn(), storage: null });
    auth.getState().login(fakeTokens());
    const client = testQueryClient();
    const tree = (projectId: string | null) => (
      <QueryClientProvider client={client}>
        <LiveProvider auth={auth} projectId={projectId} createSocket={(url) => new FakeSocket(url)} throttleMs={50}>
          <PollProbe />
        </LiveProvider>
      </QueryClientProvider>
    );
    const { rerender } = render(tree('p-alpha'));
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    expect(FakeSocket.all[0]!.url).toMatch(/\/ws\/events\?token=[^&]+&projectId=p-alpha$/);
    act(() => FakeSocket.all[0]!.open());
    rerender(tree('p-beta'));
    await waitFor(() => expect(FakeSocket.all).toHaveLength(2));
    expect(FakeSocket.all[0]!.closedWith).toBe(1000);
    expect(FakeSocket.all[1]!.url).toMatch(/&projectId=p-beta$/);
    act(() => auth.getState().logout());
  });

  it('stops the socket on logout', async () => {
    const { auth } = setup();
    await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
    act(() => FakeSocket.all[0]!.open());
    act(() => auth.getState().logout());
    expect(FakeSocket.all[0]!.readyState).toBe(3);
  });
});

describe('cache helpers', () => {
  it('names the queries a change makes stale', () => {
    const keys = affectedKeys([
      { jobId: JOB, attempt: 3, fromStatus: 'running', toStatus: 'dead', reason: 'max_attempts', jobType: 'email', at: '' },
    ]).map((k) => JSON.stringify(k));
    expect(keys).toContain(JSON.stringify(queryKeys.jobLists));
    expect(keys).toContain(JSON.stringify(queryKeys.jobDetail(JOB)));
    expect(keys).toContain(JSON.stringify(queryKeys.deadLetters));
    expect(keys).toContain(JSON.stringify(queryKeys.analytics));
  });

  it("refreshes the queue depths and a project's queues (running, waiting) as aggregates", () => {
    const keys = affectedKeys([
      { jobId: JOB, attempt: 1, fromStatus: 'queued', toStatus: 'running', reason: 'dispatched', jobType: 'email', at: '' },
    ]);
    const queues = keys.filter((key) => JSON.stringify(key) === JSON.stringify(queryKeys.queues));
    expect(queues).toHaveLength(1);
    expect(isAggregate(queryKeys.queues)).toBe(true);
    // one prefix covers both, in every project they are cached for
    for (const key of [queryKeys.queueDepths, queryKeys.queueList({ pageNumber: 1, pageSize: 25 })]) {
      expect(partialMatchKey(scopedKey(key, 'p1'), queryKeys.queues)).toBe(true);
    }
  });

  it('leaves pages without the job untouched', () => {
    const client = testQueryClient();
    const page = seededPage();
    client.setQueryData(listKey, page);
    patchJobCaches(client, [
      { jobId: 'other', attempt: 1, fromStatus: 'queued', toStatus: 'running', reason: '', jobType: 'email', at: '' },
    ]);
    expect(client.getQueryData(listKey)).toBe(page);
  });

  it("drops a cached job page's progress when a change moves the job on, also to a newer attempt of the same status", () => {
    const client = testQueryClient();
    const running = {
      jobId: JOB,
      status: 'running',
      attempt: 1,
      children: [],
      progress: { percent: 40, message: 'half' },
    } as unknown as JobDetail;
    client.setQueryData(queryKeys.jobDetail(JOB), running);
    const move = (attempt: number, fromStatus: string, toStatus: string) =>
      patchJobCaches(client, [{ jobId: JOB, attempt, fromStatus, toStatus, reason: '', jobType: 'email', at: '' }]);
    move(1, 'queued', 'running'); // an older frame of what the page shows: nothing to change
    expect(client.getQueryData(queryKeys.jobDetail(JOB))).toBe(running);
    // a burst (running -> failed -> queued -> running) arrives as its last change only
    move(2, 'queued', 'running');
    expect(client.getQueryData<JobDetail>(queryKeys.jobDetail(JOB))).toMatchObject({ status: 'running', attempt: 2, progress: null });
    client.setQueryData(queryKeys.jobDetail(JOB), running);
    move(1, 'running', 'succeeded');
    expect(client.getQueryData<JobDetail>(queryKeys.jobDetail(JOB))).toMatchObject({ status: 'succeeded', attempt: 1, progress: null });
  });

  it('patches a job page cached for any project the console followed', () => {
    const client = testQueryClient();
    const key = scopedKey(queryKeys.jobDetail(JOB), 'p-alpha');
    client.setQueryData(key, { jobId: JOB, status: 'queued', attempt: 1, children: [] });
    patchJobCaches(client, [
      { jobId: JOB, attempt: 1, fromStatus: 'queued', toStatus: 'running', reason: '', jobType: 'email', at: '', projectId: 'p-alpha' },
    ]);
    expect(client.getQueryData<JobDetail>(key)?.status).toBe('running');
  });

  it("keeps a cached job page's children current", () => {
    const client = testQueryClient();
    const parent = {
      jobId: 'parent',
      status: 'succeeded',
      attempt: 1,
      children: [
        { jobId: 'child-a', type: 'email', status: 'blocked' },
        { jobId: 'child-b', type: 'email', status: 'blocked' },
      ],
    } as unknown as JobDetail;
    client.setQueryData(queryKeys.jobDetail('parent'), parent);
    patchJobCaches(client, [
      { jobId: 'child-a', attempt: 1, fromStatus: 'blocked', toStatus: 'queued', reason: '', jobType: 'email', at: '' },
    ]);
    const patched = client.getQueryData<JobDetail>(queryKeys.jobDetail('parent'));
    expect(patched?.children.map((c) => c.status)).toEqual(['queued', 'blocked']);
    patchJobCaches(client, [
      { jobId: 'unrelated', attempt: 1, fromStatus: 'queued', toStatus: 'running', reason: '', jobType: 'email', at: '' },
    ]);
    expect(client.getQueryData(queryKeys.jobDetail('parent'))).toBe(patched);
  });
});
