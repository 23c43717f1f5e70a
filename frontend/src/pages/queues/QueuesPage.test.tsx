/** The Queues page: limits as the table shows them, and what each role may change (docs/frontend.md). */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import type { QueueHistory, QueueView } from '../../api/types';
import { ALPHA, BETA, page, PERSONAL_PROJECT, teamAccess } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { QueuesPage } from './QueuesPage';

vi.mock('../../api/endpoints', () => ({
  listProjectQueues: vi.fn(),
  createQueue: vi.fn(),
  updateQueue: vi.fn(),
  pauseQueue: vi.fn(),
  resumeQueue: vi.fn(),
  deleteQueue: vi.fn(),
  // no history unless a test serves one
  getQueueHistory: vi.fn(() =>
    Promise.resolve({ items: [], pageNumber: 1, pageSize: 25, totalItems: 0, totalPages: 0, firstMinute: '2030-01-01T00:00:00Z', minutes: 60 }),
  ),
  getProjectFlow: vi.fn((projectId: string) =>
    Promise.resolve({ projectId, weight: 4, maxWaiting: null, maxSubmittedPerDay: null, updatedBy: null, updatedAt: null }),
  ),
  setProjectFlow: vi.fn(),
  getUsage: vi.fn(({ from, to }: { from: string; to: string }) =>
    Promise.resolve({
      firstDay: from,
      lastDay: to,
      items: [],
      totals: { submitted: 0, attempts: 0, runSeconds: 0, succeeded: 0, dead: 0 },
    }),
  ),
  listRetryPolicies: vi.fn(() =>
    Promise.resolve({
      items: [
        {
          name: 'patient',
          strategy: 'exponential',
          baseDelayMs: 1000,
          multiplier: 2,
          maxDelayMs: 60000,
          jitter: true,
          maxAttempts: 5,
          projectId: null,
          createdBy: 'admin@test.com',
          createdAt: '2030-01-01T00:00:00Z',
        },
      ],
    }),
  ),
}));

function queue(name: string, overrides: Partial<QueueView> = {}): QueueView {
  return {
    id: `id-${name}`,
    projectId: ALPHA,
    name,
    maxConcurrency: null,
    rateLimit: null,
    concurrencyKey: null,
    paused: false,
    pausedAt: null,
    pausedBy: null,
    defaultPriority: null,
    defaultTimeoutSeconds: null,
    defaultRetryPolicy: null,
    createdBy: 'owner@example.com',
    createdAt: '2030-01-01T00:00:00Z',
    updatedAt: '2030-01-01T00:00:00Z',
    waiting: 0,
    running: 0,
    oldestQueuedAt: null,
    oldestAgeSeconds: null,
    ...overrides,
  };
}

/** A queue's last hour: `waiting` and `running` per minute, null where nobody sampled. */
function history(queueId: string, waiting: (number | null)[], running: (number | null)[]): QueueHistory {
  return { queueId, projectId: ALPHA, name: queueId.replace(/^id-/, ''), waiting, running };
}

/** The API's queues: the list reads them, the commands change them. */
let stored: QueueView[] = [];

function serve(...queues: QueueView[]) {
  stored = queues;
  vi.mocked(endpoints.listProjectQueues).mockImplementation(() => Promise.resolve(page([...stored])));
}

function change(id: string, patch: Partial<QueueView>): QueueView {
  const updated = { ...stored.find((q) => q.id === id)!, ...patch };
  stored = stored.map((q) => (q.id === id ? updated : q));
  return updated;
}

const row = (name: string) => screen.getAllByTestId('queue-row').find((r) => r.dataset.queueName === name)!;
const cell = (name: string, testId: string) => within(row(name)).getByTestId(testId);

function asAdmin() {
  return renderWithProviders(<QueuesPage />, {
    route: `/queues?project=${ALPHA}`,
    access: teamAccess({ role: 'admin', projectId: ALPHA }),
  });
}

describe('<QueuesPage>', () => {
  beforeEach(() => {
    vi.clearAllMocks();
    serve(
      queue('emails', {
        maxConcurrency: 5,
        running: 3,
        waiting: 1200,
        oldestQueuedAt: '2030-01-01T00:00:00Z',
        oldestAgeSeconds: 185,
        rateLimit: { limit: 20, per: 'second' },
        concurrencyKey: { field: 'customerId', limit: 1 },
        defaultPriority: 3,
        defaultTimeoutSeconds: 30,
        defaultRetryPolicy: 'patient',
      }),
      queue('reports', {
        running: 3,
        rateLimit: { limit: 600, per: 'minute' },
        paused: true,
        pausedBy: 'owner@example.com',
        pausedAt: '2030-01-02T00:00:00Z',
      }),
    );
  });

  it('shows each queue with its limits: running of the maximum, the rate, the key, waiting, defaults', async () => {
    const { container } = asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    expect(cell('emails', 'queue-running')).toHaveTextContent('3 / 5');
    expect(cell('reports', 'queue-running')).toHaveTextContent('3 / ∞');
    expect(cell('emails', 'queue-rate')).toHaveTextContent('20/s');
    expect(cell('reports', 'queue-rate')).toHaveTextContent('600/min');
    expect(cell('emails', 'queue-key')).toHaveTextContent('customerId ≤ 1');
    expect(cell('reports', 'queue-key')).toHaveTextContent('—');
    expect(cell('emails', 'queue-waiting')).toHaveTextContent(/^1[,.\s\u202f]?200oldest queued 3 min 5 s$/);
    expect(within(cell('reports', 'queue-waiting')).queryByTestId('queue-oldest')).toBeNull();
    expect(cell('emails', 'queue-defaults')).toHaveTextContent('priority High (3)timeout 30 sretry patient');
    expect(cell('reports', 'queue-defaults')).toHaveTextContent('—');
    expect(within(cell('emails', 'queue-state')).getByText('active')).toBeInTheDocument();
    expect(within(cell('reports', 'queue-state')).getByText('paused')).toBeInTheDocument();
    expect(cell('reports', 'queue-state')).toHaveTextContent('by owner@example.com');
    // the chosen project's list: no project column
    expect(screen.queryByRole('columnheader', { name: 'Project' })).toBeNull();
    expect(endpoints.listProjectQueues).toHaveBeenCalledWith({ pageNumber: 1, pageSize: 25 }, expect.anything());
    // the project's weight and quotas, above the list
    expect(await screen.findByTestId('project-weight')).toHaveTextContent('4');
    expect(screen.getByTestId('project-flow').compareDocumentPosition(screen.getByTestId('queues-table'))).toBe(
      Node.DOCUMENT_POSITION_FOLLOWING,
    );
    // the project's usage, between its settings and the list
    expect(await screen.findByTestId('usage-empty')).toBeInTheDocument();
    expect(screen.getByTestId('usage').compareDocumentPosition(screen.getByTestId('queues-table'))).toBe(
      Node.DOCUMENT_POSITION_FOLLOWING,
    );
    expect(await seriousViolations(container)).toEqual([]);
  });

  it("shows each queue's unfinished jobs by state and priority, and its last hour with a text alternative", async () => {
    serve(
      queue('emails', {
        waiting: 7,
        running: 1,
        depth: [
          { status: 'scheduled', priority: 2, count: 1 },
          { status: 'queued', priority: 3, count: 4 },
          { status: 'queued', priority: 1, count: 2 },
          { status: 'running', priority: 3, count: 1 },
        ],
      }),
      queue('idle'),
    );
    // 60 minutes: the first 20 not sampled (the scheduler started since), then a rise
    const waiting = [...Array<null>(20).fill(null), ...Array.from({ length: 40 }, (_, i) => Math.min(i, 12))];
    waiting[59] = 6;
    const running = waiting.map((w) => (w === null ? null : Math.min(w, 2)));
    vi.mocked(endpoints.getQueueHistory).mockResolvedValue({
      ...page([history('id-emails', waiting, running), history('id-idle', Array<number>(60).fill(0), Array<number>(60).fill(0))]),
      firstMinute: '2030-01-01T11:01:00Z',
      minutes: 60,
    });
    const { container } = asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));

    const depth = within(cell('emails', 'queue-depth')).getByRole('table', {
      name: 'Unfinished jobs of emails by state and priority',
    });
    const rows = within(depth).getAllByRole('row');
    expect(rows.map((r) => r.textContent)).toEqual(['StateHighMediumLow', 'scheduled010', 'queued402', 'running100']);
    expect(within(depth).getByRole('rowheader', { name: 'queued' })).toBeInTheDocument();
    expect(cell('idle', 'queue-depth')).toHaveTextContent('nothing unfinished');

    // the same page of queues, the last 60 minutes
    expect(endpoints.getQueueHistory).toHaveBeenCalledWith({ pageNumber: 1, pageSize: 25, minutes: 60 }, expect.anything());
    const spark = await within(cell('emails', 'queue-last-hour')).findByRole('img');
    expect(spark).toHaveAccessibleName(
      'Last 60 minutes of emails: waiting up to 12, 6 at the last sample; running up to 2, 2 at the last sample. ' +
        '20 of the minutes were not sampled.',
    );
    const lines = spark.querySelectorAll('path');
    expect([...lines].map((l) => l.dataset.series)).toEqual(['waiting', 'running']);
    expect(lines[1]).toHaveAttribute('stroke-dasharray', '3 2'); // told apart without colour
    expect(within(cell('idle', 'queue-last-hour')).getByRole('img')).toHaveAccessibleName(
      'Last 60 minutes of idle: waiting up to 0, 0 at the last sample; running up to 0, 0 at the last sample.',
    );
    expect(screen.getByTestId('queue-history-key')).toHaveTextContent('waiting (solid line)');
    expect(screen.getByRole('columnheader', { name: 'Last hour' })).toBeInTheDocument();
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('shows a dash for the last hour while it cannot be read, and the depth still', async () => {
    serve(queue('emails', { waiting: 1, depth: [{ status: 'blocked', priority: 1, count: 1 }] }));
    vi.mocked(endpoints.getQueueHistory).mockRejectedValue(new ApiError(503, 'service_unavailable', 'down'));
    asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(1));
    await waitFor(() => expect(endpoints.getQueueHistory).toHaveBeenCalled());
    expect(cell('emails', 'queue-last-hour')).toHaveTextContent('—');
    expect(within(cell('emails', 'queue-depth')).getByRole('rowheader', { name: 'blocked' })).toBeInTheDocument();
  });

  it('shows a viewer the queues but no control, and why', async () => {
    const { container } = renderWithProviders(<QueuesPage />, {
      route: `/queues?project=${ALPHA}`,
      access: teamAccess({ role: 'viewer', projectId: ALPHA }),
    });
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    for (const name of ['emails', 'reports']) {
      expect(within(row(name)).queryAllByRole('button')).toEqual([]);
      expect(within(row(name)).getByTestId('queue-view-only')).toHaveTextContent(
        'View only: admins pause, change and delete (your role: Viewer)',
      );
    }
    expect(screen.queryByRole('form', { name: 'New queue' })).toBeNull();
    expect(screen.getByTestId('queue-create-denied')).toHaveTextContent(
      'You are a viewer in Alpha: creating and changing queues takes the admin role or above.',
    );
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('with all projects chosen, shows each queue\'s project and lets its own role decide', async () => {
    serve(queue('alpha-q', { projectId: ALPHA }), queue('mine', { projectId: PERSONAL_PROJECT }), queue('beta-q', { projectId: BETA }));
    renderWithProviders(<QueuesPage />, { route: '/queues', access: teamAccess({ role: 'member' }) });
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(3));
    expect(screen.getByRole('columnheader', { name: 'Project' })).toBeInTheDocument();
    expect(row('alpha-q')).toHaveTextContent('Alpha');
    expect(within(row('alpha-q')).queryByRole('button', { name: 'Pause queue alpha-q' })).toBeNull();
    expect(within(row('mine')).getByRole('button', { name: 'Pause queue mine' })).toBeEnabled();
    expect(screen.getByTestId('queue-target')).toHaveTextContent('Creating in Default');
    expect(screen.getByTestId('project-flow-choose')).toBeInTheDocument();
    expect(endpoints.getProjectFlow).not.toHaveBeenCalled();
    expect(screen.getByTestId('usage-choose')).toBeInTheDocument();
    expect(endpoints.getUsage).not.toHaveBeenCalled();
  });

  it('pauses and resumes a queue in one click, through the pause and resume routes', async () => {
    const user = userEvent.setup();
    vi.mocked(endpoints.pauseQueue).mockImplementation((id) => Promise.resolve(change(id, { paused: true })));
    vi.mocked(endpoints.resumeQueue).mockImplementation((id) => Promise.resolve(change(id, { paused: false })));
    asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    await user.click(within(row('emails')).getByRole('button', { name: 'Pause queue emails' }));
    expect(endpoints.pauseQueue).toHaveBeenCalledWith('id-emails');
    expect(endpoints.resumeQueue).not.toHaveBeenCalled();
    await waitFor(() => expect(row('emails')).toHaveAttribute('data-paused', 'true'));
    await user.click(within(row('emails')).getByRole('button', { name: 'Resume queue emails' }));
    expect(endpoints.resumeQueue).toHaveBeenCalledWith('id-emails');
    await waitFor(() => expect(row('emails')).toHaveAttribute('data-paused', 'false'));
  });

  it('sends null for a limit emptied in "Edit limits", and only what changed', async () => {
    const user = userEvent.setup();
    vi.mocked(endpoints.updateQueue).mockImplementation((id) => Promise.resolve(change(id, { maxConcurrency: null })));
    const { container } = asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    const open = within(row('emails')).getByRole('button', { name: 'Edit limits of emails' });
    await user.click(open);
    expect(open).toHaveAttribute('aria-expanded', 'true');
    const form = screen.getByRole('form', { name: 'Edit limits of emails' });
    expect(screen.getByRole('heading', { name: 'Edit limits of emails' })).toHaveFocus();
    expect(within(form).getByLabelText('Max concurrency')).toHaveValue('5');
    expect(within(form).getByLabelText('Rate limit')).toHaveValue('20');
    expect(within(form).getByLabelText('Key field')).toHaveValue('customerId');
    expect(within(form).getByLabelText('Default retry policy')).toHaveValue('patient');
    expect(await seriousViolations(container)).toEqual([]);

    await user.clear(within(form).getByLabelText('Max concurrency'));
    await user.click(within(form).getByRole('button', { name: 'Save limits' }));
    await waitFor(() => expect(endpoints.updateQueue).toHaveBeenCalledTimes(1));
    expect(endpoints.updateQueue).toHaveBeenCalledWith('id-emails', { maxConcurrency: null });
    await waitFor(() => expect(screen.queryByRole('form', { name: 'Edit limits of emails' })).toBeNull());
    expect(open).toHaveFocus(); // back where the form was opened
    await waitFor(() => expect(cell('emails', 'queue-running')).toHaveTextContent('3 / ∞'));
  });

  it('clears a rate limit and a key as null, sets a new rate, and checks numbers before sending', async () => {
    const user = userEvent.setup();
    vi.mocked(endpoints.updateQueue).mockImplementation((id) => Promise.resolve(change(id, {})));
    asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    await user.click(within(row('emails')).getByRole('button', { name: 'Edit limits of emails' }));
    const form = screen.getByRole('form', { name: 'Edit limits of emails' });
    await user.clear(within(form).getByLabelText('Key field'));
    await user.clear(within(form).getByLabelText('Running per key value'));
    await user.clear(within(form).getByLabelText('Rate limit'));
    await user.type(within(form).getByLabelText('Rate limit'), 'many');
    await user.click(within(form).getByRole('button', { name: 'Save limits' }));
    expect(await within(form).findByTestId('error-edit.rateLimit.limit')).toHaveTextContent('A whole number, 1 to 100,000');
    expect(within(form).getByLabelText('Rate limit')).toHaveAttribute('aria-invalid', 'true');
    expect(endpoints.updateQueue).not.toHaveBeenCalled();

    await user.clear(within(form).getByLabelText('Rate limit'));
    await user.type(within(form).getByLabelText('Rate limit'), '600');
    await user.selectOptions(within(form).getByLabelText('Per'), 'minute');
    await user.click(within(form).getByRole('button', { name: 'Save limits' }));
    await waitFor(() =>
      expect(endpoints.updateQueue).toHaveBeenCalledWith('id-emails', {
        rateLimit: { limit: 600, per: 'minute' },
        concurrencyKey: null,
      }),
    );
  });

  it("shows the API's message and field details when a change is refused", async () => {
    const user = userEvent.setup();
    vi.mocked(endpoints.updateQueue).mockRejectedValue(
      new ApiError(422, 'validation_error', 'no retry policy named "gone"', [
        { field: 'defaultRetryPolicy', message: 'unknown retry policy' },
      ]),
    );
    asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    await user.click(within(row('reports')).getByRole('button', { name: 'Edit limits of reports' }));
    const form = screen.getByRole('form', { name: 'Edit limits of reports' });
    await user.type(within(form).getByLabelText('Default timeout (seconds)'), '60');
    await user.click(within(form).getByRole('button', { name: 'Save limits' }));
    expect(endpoints.updateQueue).toHaveBeenCalledWith('id-reports', { defaultTimeoutSeconds: 60 });
    const summary = await within(form).findByTestId('error-summary');
    expect(summary).toHaveTextContent('no retry policy named "gone"');
    expect(summary).toHaveTextContent('Default retry policy: unknown retry policy');
    expect(within(form).getByTestId('error-edit.defaultRetryPolicy')).toHaveTextContent('unknown retry policy');
  });

  it('creates a queue in the chosen project with the limits given, and shows a name taken', async () => {
    const user = userEvent.setup();
    vi.mocked(endpoints.createQueue)
      .mockRejectedValueOnce(new ApiError(409, 'conflict', 'the project already has a queue named "emails"'))
      .mockImplementation((body) => Promise.resolve(queue(body.name)));
    asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    expect(screen.getByTestId('queue-target')).toHaveTextContent('Creating in Alpha (Acme Corp).');
    const form = screen.getByRole('form', { name: 'New queue' });
    await user.type(within(form).getByLabelText('Name'), 'emails');
    await user.type(within(form).getByLabelText('Max concurrency'), '2');
    await user.type(within(form).getByLabelText('Rate limit'), '10');
    await user.selectOptions(within(form).getByLabelText('Default priority'), '1');
    await user.click(within(form).getByRole('button', { name: 'Create queue' }));
    expect(await within(form).findByTestId('error-summary')).toHaveTextContent('the project already has a queue named "emails"');
    expect(endpoints.createQueue).toHaveBeenLastCalledWith({
      name: 'emails',
      maxConcurrency: 2,
      rateLimit: { limit: 10, per: 'second' },
      defaultPriority: 1,
    });

    await user.clear(within(form).getByLabelText('Name'));
    await user.type(within(form).getByLabelText('Name'), 'emails-eu');
    await user.click(within(form).getByLabelText(/Create paused/));
    await user.click(within(form).getByRole('button', { name: 'Create queue' }));
    await waitFor(() => expect(endpoints.createQueue).toHaveBeenCalledTimes(2));
    expect(endpoints.createQueue).toHaveBeenLastCalledWith(expect.objectContaining({ name: 'emails-eu', paused: true }));
    await waitFor(() => expect(within(form).getByLabelText('Name')).toHaveValue(''));
  });

  it('refuses a bad name and a key field without its limit on the client', async () => {
    const user = userEvent.setup();
    asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    const form = screen.getByRole('form', { name: 'New queue' });
    await user.type(within(form).getByLabelText('Name'), 'Emails!');
    await user.type(within(form).getByLabelText('Key field'), 'customerId');
    await user.click(within(form).getByRole('button', { name: 'Create queue' }));
    expect(await within(form).findByTestId('error-queue.name')).toHaveTextContent('starting with a letter');
    expect(within(form).getByTestId('error-queue.concurrencyKey.limit')).toHaveTextContent('Required with a key field');
    expect(endpoints.createQueue).not.toHaveBeenCalled();
  });

  it('deletes after a confirmation, and says why not while the queue has unfinished jobs', async () => {
    const user = userEvent.setup();
    vi.mocked(endpoints.deleteQueue)
      .mockRejectedValueOnce(new ApiError(409, 'conflict', 'queue reports has 2 unfinished jobs'))
      .mockImplementation((id) => {
        stored = stored.filter((q) => q.id !== id);
        return Promise.resolve(undefined);
      });
    asAdmin();
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(2));
    await user.click(within(row('reports')).getByTestId('delete-queue-reports'));
    expect(endpoints.deleteQueue).not.toHaveBeenCalled();
    await user.click(within(row('reports')).getByTestId('delete-queue-reports-confirm'));
    expect(await within(row('reports')).findByTestId('queue-error')).toHaveTextContent(
      'Not deleted: queue reports has 2 unfinished jobs',
    );
    expect(endpoints.deleteQueue).toHaveBeenCalledWith('id-reports');

    await user.click(within(row('reports')).getByTestId('delete-queue-reports'));
    await user.click(within(row('reports')).getByTestId('delete-queue-reports-confirm'));
    await waitFor(() => expect(screen.getAllByTestId('queue-row')).toHaveLength(1));
  });
});
