import { keepPreviousData, useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../../api/client';
import { deleteQueue, getQueueHistory, listProjectQueues, pauseQueue, resumeQueue } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { QueueHistory, QueuePage, QueueView } from '../../api/types';
import { ConfirmAction } from '../../components/ConfirmAction';
import { Denied } from '../../components/Denied';
import type { Column } from '../../components/ListTable';
import { PageHeader } from '../../components/PageHeader';
import { QueryTable } from '../../components/QueryList';
import { StatusBadge } from '../../components/StatusBadge';
import { formatDateTime, formatDuration, formatNumber } from '../../lib/format';
import { notify } from '../../lib/notices';
import { HISTORY_MINUTES } from '../../lib/queueDepth';
import { formatConcurrency, formatConcurrencyKey, formatRate, queueDefaults } from '../../lib/queueForm';
import { ROLE_LABELS } from '../../lib/tenancy';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { actingProject, deniedReason, useProjectAccess, useRights } from '../../project/access';
import { useProjectId, useSearchParams } from '../../project/navigation';
import { Link } from '../../project/links';
import { ProjectName } from '../../project/ProjectName';
import { useScopedQuery } from '../../project/useScopedQuery';
import { ProjectFlowPanel } from './ProjectFlowPanel';
import { DepthTable, HistoryKey, QueueSparkline } from './QueueDepth';
import { CreateQueueForm, EditQueueForm } from './QueueForm';
import { UsagePanel } from './UsagePanel';

const PAGE_SIZE = 25;
const EDIT_PANEL = 'queue-edit';

interface RowProps {
  queue: QueueView;
  /** Its last hour (undefined while it loads or when it cannot be read). */
  history: QueueHistory | undefined;
  showProject: boolean;
  editing: boolean;
  onEdit: (queueId: string | null) => void;
}

function QueueRow({ queue, history, showProject, editing, onEdit }: RowProps) {
  const client = useQueryClient();
  // the queue's project decides: pausing, changing and deleting take its admins
  const rights = useRights(queue.projectId);
  const [error, setError] = useState<string | null>(null);
  const show = (view: QueueView) =>
    client.setQueriesData<QueuePage>({ queryKey: queryKeys.queueLists }, (page) =>
      page ? { ...page, items: page.items.map((q) => (q.id === view.id ? view : q)) } : page,
    );
  const toggle = useMutation({
    mutationFn: () => (queue.paused ? resumeQueue(queue.id) : pauseQueue(queue.id)),
    onMutate: () => setError(null),
    onSuccess: (view) => {
      show(view);
      notify(`Queue "${view.name}" ${view.paused ? 'paused' : 'resumed'}`);
      void client.invalidateQueries({ queryKey: queryKeys.queueLists });
    },
    onError: (e) => setError(`Failed: ${errorMessage(e)}`),
  });
  const remove = useMutation({
    mutationFn: () => deleteQueue(queue.id),
    onMutate: () => setError(null),
    onSuccess: () => {
      if (editing) onEdit(null);
      notify(`Queue "${queue.name}" deleted`);
      void client.invalidateQueries({ queryKey: queryKeys.queueLists });
    },
    // 409 while it has unfinished jobs: the API's message says so
    onError: (e) => setError(`Not deleted: ${errorMessage(e)}`),
  });
  const editButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(editing);
  useEffect(() => {
    // the edit form closed (saved or cancelled): back to the button that opened it
    if (wasEditing.current && !editing) editButton.current?.focus();
    wasEditing.current = editing;
  }, [editing]);
  const defaults = queueDefaults(queue);
  return (
    <tr data-testid="queue-row" data-queue-name={queue.name} data-paused={queue.paused}>
      <th scope="row" className="mono">
        <Link to={`/queues/${queue.id}`}>
          {queue.name}
        </Link>
      </th>
      {showProject ? (
        <td>
          <ProjectName projectId={queue.projectId} />
        </td>
      ) : null}
      <td data-testid="queue-state">
        <StatusBadge status={queue.paused ? 'paused' : 'active'} />
        {queue.paused && (queue.pausedBy || queue.pausedAt) ? (
          <div className="muted">
            {queue.pausedBy ? `by ${queue.pausedBy}` : null} {queue.pausedAt ? formatDateTime(queue.pausedAt) : null}
          </div>
        ) : null}
      </td>
      <td className="num nowrap" data-testid="queue-running">
        {formatConcurrency(queue.running, queue.maxConcurrency)}
      </td>
      <td className="nowrap" data-testid="queue-rate">
        {formatRate(queue.rateLimit)}
      </td>
      <td className="nowrap" data-testid="queue-key">
        {formatConcurrencyKey(queue.concurrencyKey)}
      </td>
      <td className="num" data-testid="queue-waiting">
        {formatNumber(queue.waiting)}
        {queue.oldestAgeSeconds !== null ? (
          <div className="muted nowrap" data-testid="queue-oldest">
            oldest queued {formatDuration(queue.oldestAgeSeconds * 1000)}
          </div>
        ) : null}
      </td>
      <td data-testid="queue-depth">
        <DepthTable name={queue.name} depth={queue.depth ?? []} />
      </td>
      <td data-testid="queue-last-hour">
        <QueueSparkline name={queue.name} history={history} />
      </td>
      <td data-testid="queue-defaults">
        {defaults.length > 0 ? defaults.map((text) => <div key={text}>{text}</div>) : '—'}
      </td>
      <td>
        {rights.manage ? (
          // on a narrow screen the table scrolls sideways rather than stacking the buttons
          <div className="toolbar nowrap" style={{ margin: 0, flexWrap: 'nowrap' }}>
            <button
              type="button"
              onClick={() => toggle.mutate()}
              disabled={toggle.isPending}
              aria-label={`${queue.paused ? 'Resume' : 'Pause'} queue ${queue.name}`}
            >
              {queue.paused ? 'Resume' : 'Pause'}
            </button>
            <button
              type="button"
              ref={editButton}
              aria-expanded={editing}
              aria-controls={editing ? EDIT_PANEL : undefined}
              aria-label={`Edit limits of ${queue.name}`}
              onClick={() => onEdit(editing ? null : queue.id)}
            >
              Edit limits
            </button>
            <ConfirmAction
              label="Delete"
              confirmLabel="Yes, delete"
              question={`Delete queue "${queue.name}"?`}
              onConfirm={() => remove.mutate()}
              busy={remove.isPending}
              testId={`delete-queue-${queue.name}`}
            />
          </div>
        ) : (
          <span className="muted" data-testid="queue-view-only" style={{ display: 'inline-block', minWidth: '14rem' }}>
            View only: admins pause, change and delete ({rights.role ? `your role: ${ROLE_LABELS[rights.role]}` : 'not your project'})
          </span>
        )}
        {error ? (
          <p className="field-error" role="alert" data-testid="queue-error" style={{ minWidth: '16rem' }}>
            {error}
          </p>
        ) : null}
      </td>
    </tr>
  );
}

function queueColumns(showProject: boolean): Column[] {
  return [
    { label: 'Name' },
    ...(showProject ? [{ label: 'Project' }] : []),
    { label: 'State' },
    { label: 'Running / max', className: 'num' },
    { label: 'Rate' },
    { label: 'Concurrency key' },
    { label: 'Waiting', className: 'num' },
    { label: 'By state and priority' },
    { label: 'Last hour' },
    { label: 'Defaults' },
    { label: 'Actions' },
  ];
}

/** Where a new queue goes (the project chosen, else the personal default one), or why not. */
function CreateQueue() {
  const access = useProjectAccess();
  const rights = useRights();
  const target = access ? actingProject(access) : null;
  if (!rights.manage) {
    return <Denied testId="queue-create-denied">{deniedReason(rights, 'manage', 'creating and changing queues')}</Denied>;
  }
  return (
    <>
      <p data-testid="queue-target">
        Creating in <strong>{target ? target.project.name : 'your personal default project'}</strong>
        {target?.org ? ` (${target.org.name})` : ''}.
      </p>
      <CreateQueueForm />
    </>
  );
}

/**
 * A project's queues (GET /api/queues): their limits, defaults and pause, with the jobs each
 * has running and waiting now (by state and priority) and its last hour per minute (GET
 * /api/queues/history); its admins pause and resume, change limits, create and delete.
 */
export function QueuesPage() {
  usePageTitle('Queues');
  const projectId = useProjectId();
  const [search, setSearch] = useSearchParams();
  const page = Number(search.get('page') ?? '1') || 1;
  // the queue whose limits are being edited, in the project it was opened in
  const [opened, setOpened] = useState<{ queueId: string; projectId: string | null } | null>(null);
  const editing = opened?.projectId === projectId ? opened.queueId : null;
  const setEditing = (queueId: string | null) => setOpened(queueId ? { queueId, projectId } : null);
  const poll = usePollWhileOffline(5_000);
  const params = { pageNumber: page, pageSize: PAGE_SIZE };
  const queues = useScopedQuery({
    queryKey: queryKeys.queueList(params),
    queryFn: ({ signal }) => listProjectQueues(params, signal),
    placeholderData: keepPreviousData,
    // running and waiting follow the live job changes; limits and pauses another admin sets
    // come with no event: read them again every 15 s
    refetchInterval: poll === false ? 15_000 : poll,
  });
  // the same page's last hour: sampled once a minute, read on the page's cadence
  const historyParams = { ...params, minutes: HISTORY_MINUTES };
  const history = useScopedQuery({
    queryKey: queryKeys.queueHistory(historyParams),
    queryFn: ({ signal }) => getQueueHistory(historyParams, signal),
    placeholderData: keepPreviousData,
    refetchInterval: poll === false ? 15_000 : poll,
  });
  const historyOf = new Map((history.data?.items ?? []).map((h) => [h.queueId, h]));
  const edited = editing ? (queues.data?.items.find((q) => q.id === editing) ?? null) : null;
  return (
    <>
      <PageHeader title="Queues" />
      <p className="muted">
        How the project&apos;s jobs run: at most so many running (in all and per value of a payload field), so many started
        per second or minute, paused or not, and the defaults each queue gives its jobs; what each queue holds now by state
        and priority, and its last hour.
      </p>
      <ProjectFlowPanel />
      <UsagePanel />
      <section className="card" aria-labelledby="queues-heading">
        <h2 id="queues-heading" style={{ marginTop: 0 }}>
          Queues
        </h2>
        <HistoryKey />
        <QueryTable
          query={queues}
          loadingLabel="Loading queues…"
          empty="No queues yet: a queue appears when the project's first job names it, or create one below."
          tableLabel="Queues table"
          pagination={{ page, onPage: (p) => setSearch(p === 1 ? {} : { page: String(p) }), label: 'Queue pages' }}
          testId="queues-table"
          columns={queueColumns(projectId === null)}
        >
          {(queue) => (
            <QueueRow
              key={queue.id}
              queue={queue}
              history={historyOf.get(queue.id)}
              showProject={projectId === null}
              editing={editing === queue.id}
              onEdit={setEditing}
            />
          )}
        </QueryTable>
      </section>
      {edited ? <EditQueueForm key={edited.id} queue={edited} onClose={() => setEditing(null)} /> : null}
      <section className="card" aria-labelledby="create-queue-heading">
        <h2 id="create-queue-heading" style={{ marginTop: 0 }}>
          New queue
        </h2>
        <CreateQueue />
      </section>
    </>
  );
}
