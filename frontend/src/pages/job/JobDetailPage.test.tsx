import { QueryClientProvider } from '@tanstack/react-query';
import { act, render, screen, waitFor, within } from '@testing-library/react';
import { MemoryRouter, Route, Routes } from 'react-router';
import { afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import type { JobDetail, JobStatus, LogLine } from '../../api/types';
import { createAuthStore } from '../../auth/store';
import { LiveProvider } from '../../live/LiveProvider';
import type { JobChange } from '../../live/protocol';
import { FakeSocket } from '../../test/fakeSocket';
import { fakeTokens, testQueryClient } from '../../test/utils';
import { JobDetailPage } from './JobDetailPage';

vi.mock('../../api/endpoints', () => ({
  getJobSnapshot: vi.fn(),
  getJobLogs: vi.fn(),
  cancelJob: vi.fn(),
  retryJob: vi.fn(),
}));

const getJobSnapshot = vi.mocked(endpoints.getJobSnapshot);
/** The job as the job store holds it when the page reads it (the page reads it as a snapshot). */
const getJob = vi.fn<(jobId: string) => Promise<JobDetail>>();
const getJobLogs = vi.mocked(endpoints.getJobLogs);

const JOB = 'cccccccc-0000-4000-8000-000000000003';
const T0 = '2030-01-01T10:00:00Z';

function entry(fromStatus: JobStatus | null, toStatus: JobStatus, reason: string) {
  return { fromStatus, toStatus, reason, attempt: 1, at: T0 };
}

/** The job as the API answers it while queued, and once it succeeded. */
function queuedJob(): JobDetail {
  return {
    jobId: JOB,
    type: 'simulate',
    priority: 2,
    status: 'queued',
    attempt: 1,
    maxAttempts: 3,
    submittedBy: 'user@test.com',
    projectId: '00000000-0000-4000-8000-000000000001',
    createdAt: T0,
    updatedAt: T0,
    startedAt: null,
    finishedAt: null,
    lastError: null,
    lastErrorClass: null,
    scheduleId: null,
    batchId: null,
    runAt: null,
    dependsOn: [],
    cancelRequestedAt: null,
    cancelRequestedBy: null,
    retryPolicy: null,
    payload: { minSeconds: 1 },
    result: null,
    timeoutSeconds: 60,
    leaseExpiresAt: null,
    queuedAt: T0,
    deadlineAt: null,
    lostCount: 0,
    workerId: null,
    traceId: null,
    parents: [],
    children: [],
    childrenTotal: 0,
    deadLetter: null,
    attempts: [
      {
        attempt: 1,
        status: 'queued',
        workerId: null,
        dispatchedAt: T0,
        startedAt: null,
        finishedAt: null,
        durationMs: null,
        errorClass: null,
        error: null,
      },
    ],
    timeline: [entry(null, 'pending', 'submitted'), entry('pending', 'queued', 'dispatched')],
  };
}

function succeededJob(): JobDetail {
  const job = queuedJob();
  return {
    ...job,
    status: 'succeeded',
    startedAt: T0,
    finishedAt: T0,
    result: { answer: 42 },
    attempts: [{ ...job.attempts[0]!, status: 'succeeded', startedAt: T0, finishedAt: T0, durationMs: 1000 }],
    timeline: [
      ...job.timeline,
      entry('queued', 'running', 'started on a worker'),
      entry('running', 'succeeded', 'completed'),
    ],
  };
}

const LAST_LINE: LogLine = { id: 7, attempt: 1, workerId: null, level: 'info', message: 'all done', at: T0 };

function change(fromStatus: JobStatus, toStatus: JobStatus): JobChange {
  return { jobId: JOB, attempt: 1, fromStatus, toStatus, reason: 'x', jobType: 'simulate', at: T0 };
}

function renderPage(jobId: string = JOB) {
  const auth = createAuthStore({ refreshRequest: vi.fn(), storage: null });
  auth.getState().login(fakeTokens());
  const client = testQueryClient();
  render(
    <QueryClientProvider client={client}>
      <LiveProvider auth={auth} createSocket={(url) => new FakeSocket(url)} throttleMs={50}>
        <MemoryRouter initialEntries={[`/jobs/${jobId}`]}>
          <Routes>
            <Route path="/jobs/:jobId" element={<JobDetailPage />} />
          </Routes>
        </MemoryRouter>
      </LiveProvider>
    </QueryClientProvider>,
  );
}

async function openSocket(): Promise<FakeSocket> {
  await waitFor(() => expect(FakeSocket.all).toHaveLength(1));
  const socket = FakeSocket.all[0]!;
  act(() => socket.open());
  return socket;
}

/** The whole page tells the end: header, timeline, attempt, result and the last log line. */
async function expectTheWholeEnd(): Promise<void> {
  await waitFor(() => expect(screen.getByTestId('job-status')).toHaveAttribute('data-status', 'succeeded'));
  await waitFor(() => {
    const steps = within(screen.getByTestId('job-timeline')).getAllByRole('listitem');
    expect(steps.at(-1)).toHaveTextContent('succeeded');
  });
  expect(within(screen.getByTestId('job-attempts')).getAllByRole('row')[1]).toHaveTextContent('succeeded');
  const result = screen.getByTestId('job-result');
  expect(within(result).getByLabelText('Result', { selector: 'pre' })).toHaveTextContent('"answer": 42');
  expect(result).not.toHaveTextContent('No result');
  await waitFor(() => expect(screen.getByTestId('job-logs')).toHaveTextContent('all done'));
}

/** A fresh fake socket and API for each test (``noLogs``: the job has no stored log lines). */
function freshFakes({ noLogs = false }: { noLogs?: boolean } = {}) {
  beforeEach(() => {
    FakeSocket.all = [];
    getJob.mockReset();
    getJobSnapshot.mockReset();
    getJobSnapshot.mockImplementation(async (jobId) => ({ state: 'recorded', job: await getJob(jobId) }));
    getJobLogs.mockReset();
    if (noLogs) getJobLogs.mockImplementation(() => Promise.resolve({ items: [], nextAfterId: 0 }));
  });
  afterEach(() => {
    FakeSocket.all = [];
  });
}

describe('a job page follows live status changes', () => {
  freshFakes();

  it('catches up with changes that arrived while its first answer was on its way', async () => {
    // The first request is slow and was read while the job was queued; the job runs and
    // succeeds meanwhile. A refetch asked during that request joins it, so that answer alone
    // would leave the page at "queued".
    let answerFirst: (job: JobDetail) => void = () => undefined;
    getJob.mockImplementationOnce(() => new Promise((resolve) => (answerFirst = resolve)));
    getJob.mockImplementation(() => Promise.resolve(succeededJob()));
    getJobLogs.mockImplementationOnce(() => Promise.resolve({ items: [], nextAfterId: 0 }));
    getJobLogs.mockImplementation(() => Promise.resolve({ items: [LAST_LINE], nextAfterId: 7 }));
    renderPage();
    const socket = await openSocket();
    act(() => socket.receive({ type: 'job.changes', changes: [change('queued', 'running'), change('running', 'succeeded')] }));
    await new Promise((r) => setTimeout(r, 60)); // the throttled refetch has been asked
    act(() => answerFirst(queuedJob()));
    await waitFor(() => expect(screen.getByTestId('job-status')).toBeInTheDocument());

    await expectTheWholeEnd();
    expect(getJob.mock.calls.length).toBeGreaterThanOrEqual(2);
  });

  it('asks again when the refetch after a change answered without it', async () => {
    getJob.mockImplementation(() => Promise.resolve(queuedJob()));
    getJobLogs.mockImplementationOnce(() => Promise.resolve({ items: [], nextAfterId: 0 }));
    getJobLogs.mockImplementation(() => Promise.resolve({ items: [LAST_LINE], nextAfterId: 7 }));
    renderPage();
    const socket = await openSocket();
    await waitFor(() => expect(screen.getByTestId('job-status')).toHaveAttribute('data-status', 'queued'));
    await waitFor(() => expect(getJob.mock.calls.length).toBeGreaterThanOrEqual(2)); // the reconnect's catch-up
    await new Promise((r) => setTimeout(r, 100)); // ... answered
    // the next answer was read before the change was visible; the ones after it have it
    getJob.mockImplementationOnce(() => Promise.resolve(queuedJob()));
    getJob.mockImplementation(() => Promise.resolve(succeededJob()));

    act(() => socket.receive({ type: 'job.changes', changes: [change('queued', 'succeeded')] }));
    await expectTheWholeEnd();
  });

  it('leaves a page alone for changes of other jobs', async () => {
    getJob.mockImplementation(() => Promise.resolve(queuedJob()));
    getJobLogs.mockImplementation(() => Promise.resolve({ items: [], nextAfterId: 0 }));
    renderPage();
    const socket = await openSocket();
    await waitFor(() => expect(screen.getByTestId('job-status')).toHaveAttribute('data-status', 'queued'));
    await new Promise((r) => setTimeout(r, 120));
    const asked = getJob.mock.calls.length;
    act(() =>
      socket.receive({ type: 'job.changes', changes: [{ ...change('queued', 'succeeded'), jobId: 'another-job' }] }),
    );
    await new Promise((r) => setTimeout(r, 300));
    expect(getJob.mock.calls.length).toBe(asked);
    expect(screen.getByTestId('job-status')).toHaveAttribute('data-status', 'queued');
  });
});

/** The job running its first attempt, with the progress its handler reported. */
function runningJob(progress: JobDetail['progress']): JobDetail {
  const job = queuedJob();
  return {
    ...job,
    status: 'running',
    startedAt: T0,
    workerId: 'worker-1',
    progress,
    attempts: [{ ...job.attempts[0]!, status: 'running', workerId: 'worker-1', startedAt: T0 }],
    timeline: [...job.timeline, entry('queued', 'running', 'started on a worker')],
  };
}

function attemptText(): string | null | undefined {
  return screen.getByText('Attempt', { selector: 'dt' }).nextElementSibling?.textContent;
}

describe("a job page shows the running attempt's progress", () => {
  freshFakes({ noLogs: true });

  it('as a progress bar with its percent and message, read again while the job runs and the socket is live', async () => {
    let answer = runningJob({ percent: 42.5, message: 'resizing tiles' });
    getJob.mockImplementation(() => Promise.resolve(answer));
    renderPage();
    await openSocket();
    const bar = await screen.findByRole('progressbar', { name: 'Progress' });
    expect(bar).toHaveAttribute('aria-valuemin', '0');
    expect(bar).toHaveAttribute('aria-valuemax', '100');
    expect(bar).toHaveAttribute('aria-valuenow', '42.5');
    expect(bar).toHaveAttribute('aria-valuetext', '42 % — resizing tiles');
    expect(screen.getByTestId('job-progress')).toHaveTextContent('Progress: 42 % — resizing tiles');
    await waitFor(() => expect(getJob.mock.calls.length).toBeGreaterThanOrEqual(2)); // the socket's catch-up
    await new Promise((r) => setTimeout(r, 100));

    // no live event carries progress: the page reads the running job again by itself
    answer = runningJob({ percent: 80, message: null });
    await waitFor(() => expect(screen.getByRole('progressbar', { name: 'Progress' })).toHaveAttribute('aria-valuenow', '80'), {
      timeout: 5_000,
    });
    expect(screen.getByTestId('job-progress')).toHaveTextContent(/^Progress: 80 %$/);
  });

  it('a live change does not move the header alone: the whole next snapshot replaces the whole page', async () => {
    getJob.mockImplementationOnce(() => Promise.resolve(runningJob({ percent: 60, message: 'almost' })));
    let answer: (job: JobDetail) => void = () => undefined;
    getJob.mockImplementation(() => new Promise((resolve) => (answer = resolve)));
    renderPage();
    const socket = await openSocket();
    await screen.findByRole('progressbar', { name: 'Progress' });
    expect(attemptText()).toBe('1 of 3');

    // the first attempt failed and the second started: until the job is read again the page
    // keeps showing its last snapshot, every part of it
    act(() => socket.receive({ type: 'job.changes', changes: [{ ...change('queued', 'running'), attempt: 2 }] }));
    await new Promise((r) => setTimeout(r, 150)); // the throttled refetch has been asked
    expect(screen.getByTestId('job-status')).toHaveAttribute('data-attempt', '1');
    expect(attemptText()).toBe('1 of 3');
    expect(screen.getByTestId('job-progress')).toBeInTheDocument();

    const first = runningJob(null).attempts[0]!;
    act(() =>
      answer({
        ...runningJob(null),
        attempt: 2,
        attempts: [
          { ...first, status: 'failed', error: 'simulated failure', errorClass: 'SimulatedFailure' },
          { ...first, attempt: 2, status: 'running', workerId: 'worker-2' },
        ],
        timeline: [...runningJob(null).timeline, { ...entry('running', 'failed', 'x'), attempt: 1 }, { ...entry('queued', 'running', 'x'), attempt: 2 }],
      }),
    );
    await waitFor(() => expect(screen.getByTestId('job-status')).toHaveAttribute('data-attempt', '2'));
    // in the same render: the attempts, the timeline and the summary
    expect(attemptText()).toBe('2 of 3');
    const rows = within(screen.getByTestId('job-attempts')).getAllByRole('row');
    expect(rows.at(-1)).toHaveAttribute('data-status', 'running');
    expect(rows.at(-1)).toHaveAttribute('data-attempt', '2');
    const steps = within(screen.getByTestId('job-timeline')).getAllByRole('listitem');
    expect(steps.at(-1)).toHaveAttribute('data-attempt', '2');
    expect(screen.queryByTestId('job-progress')).toBeNull();
    expect(screen.getByTestId('job-attempt-now')).toHaveTextContent('(attempt 2)');
    expect(screen.queryByTestId('job-current-error')).toBeNull();
  });

  it('not for a job that is not running', async () => {
    // the API sends none then; a stale one is not shown either
    getJob.mockImplementation(() => Promise.resolve({ ...succeededJob(), progress: { percent: 100, message: 'done' } }));
    renderPage();
    await waitFor(() => expect(screen.getByTestId('job-status')).toHaveAttribute('data-status', 'succeeded'));
    expect(screen.queryByRole('progressbar')).toBeNull();
    expect(screen.queryByTestId('job-progress')).toBeNull();
  });
});

describe('a queued job no live worker can run', () => {
  freshFakes({ noLogs: true });

  it('says why it waits', async () => {
    const reason = "no live worker serves 'acc.reverse'";
    getJob.mockImplementation(() => Promise.resolve({ ...queuedJob(), type: 'acc.reverse', waitingReason: reason }));
    renderPage();
    const note = await screen.findByTestId('job-waiting');
    expect(note).toHaveTextContent(`Waiting for a worker: ${reason}.`);
    expect(note).toHaveTextContent('acc.reverse');
  });

  it('says nothing of waiting for a job that is only queued', async () => {
    getJob.mockImplementation(() => Promise.resolve({ ...queuedJob(), waitingReason: null }));
    renderPage();
    await waitFor(() => expect(screen.getByTestId('job-status')).toHaveAttribute('data-status', 'queued'));
    expect(screen.queryByTestId('job-waiting')).toBeNull();
  });
});

describe('a job page answers at once for a job it cannot show', () => {
  freshFakes({ noLogs: true });

  it('an id no job has, or another user\'s: "not found", asked once, never again', async () => {
    getJobSnapshot.mockResolvedValue({ state: 'not_found', job: null });
    renderPage();
    expect(await screen.findByRole('heading', { name: 'Job not found' })).toBeInTheDocument();
    expect(screen.getByTestId('job-not-found')).toHaveTextContent(`No job ${JOB} was found`);
    await new Promise((r) => setTimeout(r, 300));
    expect(getJobSnapshot).toHaveBeenCalledTimes(1);
  });

  it('an id that is not a job id: "not found" without asking', async () => {
    renderPage('not-a-job');
    expect(await screen.findByTestId('job-not-found')).toHaveTextContent('No job not-a-job was found');
    expect(getJobSnapshot).not.toHaveBeenCalled();
  });

  it('a job accepted a moment ago: waits for the scheduler to record it, then shows it', async () => {
    getJobSnapshot.mockResolvedValueOnce({ state: 'accepted', job: null });
    getJob.mockImplementation(() => Promise.resolve(queuedJob()));
    renderPage();
    expect(await screen.findByTestId('job-accepted')).toHaveTextContent('waiting for the scheduler');
    await waitFor(() => expect(screen.getByTestId('job-status')).toHaveAttribute('data-status', 'queued'), { timeout: 3_000 });
    expect(screen.queryByTestId('job-not-found')).toBeNull();
  });
});

describe("a job page's summary tells the current attempt's facts", () => {
  freshFakes({ noLogs: true });

  const failedFirst = {
    ...queuedJob().attempts[0]!,
    status: 'failed',
    workerId: 'worker-1',
    startedAt: '2030-01-01T10:00:01Z',
    finishedAt: '2030-01-01T10:00:02Z',
    errorClass: 'SimulatedFailure',
    error: 'simulated failure',
  };
  const oldError = { lastError: 'simulated failure', lastErrorClass: 'SimulatedFailure', workerId: 'worker-1', startedAt: failedFirst.startedAt };

  it('no error once the retried job succeeded', async () => {
    const done = succeededJob();
    getJob.mockImplementation(() =>
      Promise.resolve({ ...done, ...oldError, attempt: 2, attempts: [failedFirst, { ...done.attempts[0]!, attempt: 2 }] }),
    );
    renderPage();
    await waitFor(() => expect(screen.getByTestId('job-status')).toHaveAttribute('data-status', 'succeeded'));
    expect(screen.queryByTestId('job-current-error')).toBeNull();
    expect(screen.getByTestId('job-attempt-now')).toHaveTextContent('(attempt 2)');
  });

  it('while attempt 2 waits: its wait, and attempt 1\'s error as what it retries after', async () => {
    const waiting = { ...queuedJob().attempts[0]!, attempt: 2, dispatchedAt: '2030-01-01T10:00:03Z' };
    getJob.mockImplementation(() => Promise.resolve({ ...queuedJob(), ...oldError, attempt: 2, attempts: [failedFirst, waiting] }));
    renderPage();
    const now = await screen.findByTestId('job-attempt-now');
    expect(now).toHaveTextContent(/^attempt 2 waiting since /);
    expect(now).not.toHaveTextContent('worker-1');
    expect(screen.getByTestId('job-current-error')).toHaveTextContent('attempt 1 failed: SimulatedFailure: simulated failure');
  });
});
