import { keepPreviousData, useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../../api/client';
import { deleteSchedule, getSchedule, listSchedules, pauseSchedule, resumeSchedule, runSchedule } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { ScheduleView } from '../../api/types';
import { useIsAdmin } from '../../auth/hooks';
import { ConfirmAction } from '../../components/ConfirmAction';
import { Denied } from '../../components/Denied';
import { JobLink } from '../../components/JobLink';
import { ListTable, type Column } from '../../components/ListTable';
import { QueryTable } from '../../components/QueryList';
import { StatusBadge } from '../../components/StatusBadge';
import { ErrorState, Loading } from '../../components/states';
import { formatDateTime } from '../../lib/format';
import { notify } from '../../lib/notices';
import { ROLE_LABELS } from '../../lib/tenancy';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { actingProject, deniedReason, useProjectAccess, useRights } from '../../project/access';
import { Link } from '../../project/links';
import { useSearchParams } from '../../project/navigation';
import { useScopedQuery } from '../../project/useScopedQuery';
import { ScheduleForm } from './ScheduleForm';

const FIRE_COLUMNS: readonly Column[] = [{ label: 'Fire time' }, { label: 'Fired at' }, { label: 'Job' }, { label: 'Job status' }];

function FireHistory({ schedule }: { schedule: ScheduleView }) {
  const poll = usePollWhileOffline(10_000);
  const detail = useScopedQuery({
    queryKey: queryKeys.scheduleDetail(schedule.id),
    queryFn: ({ signal }) => getSchedule(schedule.id, signal),
    refetchInterval: poll,
  });
  if (detail.isPending) return <Loading label="Loading fire history…" />;
  if (detail.isError) return <ErrorState error={detail.error} onRetry={() => void detail.refetch()} />;
  const fires = detail.data.fires;
  return (
    <div data-testid="fire-history">
      <p>
        <Link to={`/jobs?scheduleId=${schedule.id}`}>All jobs of this schedule</Link>
      </p>
      {fires.length === 0 ? (
        <p className="muted">It has not fired yet.</p>
      ) : (
        <ListTable caption={`Last fires of ${schedule.name}`} hiddenCaption columns={FIRE_COLUMNS} rows={fires}>
          {(fire) => (
            <tr key={`${fire.fireTime}-${fire.jobId}`}>
              <td className="nowrap">{formatDateTime(fire.fireTime)}</td>
              <td className="nowrap">{formatDateTime(fire.firedAt)}</td>
              <td>
                <JobLink jobId={fire.jobId} />
              </td>
              <td>{fire.jobStatus ? <StatusBadge status={fire.jobStatus} /> : <span className="muted">not recorded yet</span>}</td>
            </tr>
          )}
        </ListTable>
      )}
    </div>
  );
}

function newRunKey(): string {
  return crypto.randomUUID();
}

function ScheduleRow({
  schedule,
  isAdmin,
  onEdit,
}: {
  schedule: ScheduleView;
  isAdmin: boolean;
  onEdit: (schedule: ScheduleView) => void;
}) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
  // one key per run: a double click sends it twice and the scheduler runs it once
  const runKey = useRef(newRunKey());
  const done = (text: string) => {
    notify(text);
    void client.invalidateQueries({ queryKey: queryKeys.schedules });
  };
  const fail = (error: unknown) => notify(`Failed: ${errorMessage(error)}`, 'error');
  const toggle = useMutation({
    mutationFn: () => (schedule.paused ? resumeSchedule(schedule.id) : pauseSchedule(schedule.id)),
    onSuccess: (view) => done(`Schedule "${view.name}" ${view.paused ? 'paused' : 'resumed'}`),
    onError: fail,
  });
  const run = useMutation({
    mutationFn: () => runSchedule(schedule.id, runKey.current),
    onSuccess: (made) => {
      runKey.current = newRunKey();
      notify(`Schedule "${schedule.name}" ran now: job ${made.jobId.slice(0, 8)}`);
      setOpen(true);
      void client.invalidateQueries({ queryKey: queryKeys.schedules });
    },
    onError: fail,
  });
  const remove = useMutation({
    mutationFn: () => deleteSchedule(schedule.id),
    onSuccess: () => done(`Schedule "${schedule.name}" deleted`),
    onError: fail,
  });
  const type = typeof schedule.jobTemplate.type === 'string' ? schedule.jobTemplate.type : '?';
  // the schedule's project decides: pausing, resuming and deleting take its admins
  const rights = useRights(schedule.projectId);
  const historyId = `history-${schedule.id}`;
  return (
    <>
      <tr data-testid="schedule-row" data-schedule-name={schedule.name}>
        <th scope="row">
          {schedule.name}
          {schedule.declaredIn ? (
            <div className="muted" data-testid="schedule-declared" style={{ fontWeight: 'normal' }}>
              Declared in code: <code>{schedule.declaredIn}</code>
              {schedule.declaredAt ? <div>last changed by code {formatDateTime(schedule.declaredAt)}</div> : null}
            </div>
          ) : null}
        </th>
        <td>
          <code>{schedule.cron}</code>
          <div className="muted">{schedule.timezone}</div>
        </td>
        <td>{type}</td>
        <td data-testid="schedule-state">
          {schedule.paused ? <StatusBadge status="paused" /> : <StatusBadge status="active" />}
        </td>
        <td className="nowrap">{schedule.paused ? '—' : formatDateTime(schedule.nextFireAt)}</td>
        <td className="nowrap">
          {formatDateTime(schedule.lastFireAt)}
          {schedule.lastJobId ? (
            <div>
              <JobLink jobId={schedule.lastJobId} />
            </div>
          ) : null}
        </td>
        {isAdmin ? <td>{schedule.owner}</td> : null}
        <td>
          <div className="toolbar" style={{ margin: 0 }}>
            {rights.manage ? (
              <button
                type="button"
                onClick={() => run.mutate()}
                disabled={run.isPending}
                aria-label={`Run now: schedule ${schedule.name}`}
              >
                Run now
              </button>
            ) : null}
            {rights.manage && !schedule.declaredIn ? (
              <button type="button" onClick={() => onEdit(schedule)} aria-label={`Edit schedule ${schedule.name}`}>
                Edit
              </button>
            ) : null}
            {rights.manage && schedule.declaredIn ? (
              <span className="muted" data-testid="schedule-edit-in-code">
                Edit it in its code: a change here would be undone at the next deploy
              </span>
            ) : null}
            {rights.manage ? (
              <button
                type="button"
                onClick={() => toggle.mutate()}
                disabled={toggle.isPending}
                aria-label={`${schedule.paused ? 'Resume' : 'Pause'} schedule ${schedule.name}`}
              >
                {schedule.paused ? 'Resume' : 'Pause'}
              </button>
            ) : null}
            <button
              type="button"
              aria-expanded={open}
              aria-controls={historyId}
              onClick={() => setOpen((o) => !o)}
              aria-label={`Fire history of ${schedule.name}`}
            >
              History
            </button>
            {rights.manage ? (
              <ConfirmAction
                label="Delete"
                confirmLabel="Yes, delete"
                question={`Delete "${schedule.name}"?`}
                onConfirm={() => remove.mutate()}
                busy={remove.isPending}
                testId={`delete-schedule-${schedule.name}`}
              />
            ) : (
              <span className="muted" data-testid="schedule-view-only">
                View only: admins edit, run, pause and delete ({rights.role ? `your role: ${ROLE_LABELS[rights.role]}` : 'not your project'})
              </span>
            )}
          </div>
        </td>
      </tr>
      {open ? (
        <tr id={historyId}>
          <td colSpan={isAdmin ? 8 : 7}>
            <FireHistory schedule={schedule} />
          </td>
        </tr>
      ) : null}
    </>
  );
}

function scheduleColumns(isAdmin: boolean): Column[] {
  const owner = isAdmin ? [{ label: 'Owner' }] : [];
  return [
    { label: 'Name' },
    { label: 'Cron' },
    { label: 'Job type' },
    { label: 'State' },
    { label: 'Next fire' },
    { label: 'Last fire' },
    ...owner,
    { label: 'Actions' },
  ];
}

/** Where a new schedule goes (the project chosen, else the personal default one), or why not. */
function CreateSchedule() {
  const access = useProjectAccess();
  const rights = useRights();
  const target = access ? actingProject(access) : null;
  if (!rights.manage) {
    return <Denied testId="schedule-create-denied">{deniedReason(rights, 'manage', 'creating schedules')}</Denied>;
  }
  return (
    <>
      <p data-testid="schedule-target">
        Creating in <strong>{target ? target.project.name : 'your personal default project'}</strong>
        {target?.org ? ` (${target.org.name})` : ''}.
      </p>
      <ScheduleForm />
    </>
  );
}

/** The edit of one schedule, in place of the create form (their fields share ids). */
function EditSchedule({ schedule, onDone }: { schedule: ScheduleView; onDone: () => void }) {
  const heading = useRef<HTMLHeadingElement>(null);
  useEffect(() => {
    heading.current?.focus();
  }, [schedule.id]);
  return (
    <section className="card" aria-labelledby="edit-heading" data-testid="schedule-edit">
      <h2 id="edit-heading" ref={heading} tabIndex={-1} style={{ marginTop: 0 }}>
        Edit schedule {schedule.name}
      </h2>
      <p className="muted">
        Cron, time zone and the job each fire creates change; the name, owner, pause and fire history stay. The next fire
        time moves only when cron or time zone changed.
      </p>
      <ScheduleForm key={schedule.id} schedule={schedule} onDone={onDone} />
    </section>
  );
}

export function SchedulesPage() {
  usePageTitle('Schedules');
  const isAdmin = useIsAdmin();
  const [editing, setEditing] = useState<ScheduleView | null>(null);
  const [search, setSearch] = useSearchParams();
  const page = Number(search.get('page') ?? '1') || 1;
  const poll = usePollWhileOffline(15_000);
  const schedules = useScopedQuery({
    queryKey: queryKeys.scheduleList(page),
    queryFn: ({ signal }) => listSchedules({ pageNumber: page, pageSize: 20 }, signal),
    placeholderData: keepPreviousData,
    // next/last fire times move with the clock and no event says so
    refetchInterval: poll === false ? 30_000 : poll,
  });
  return (
    <>
      <h1>Schedules</h1>
      <section className="card" aria-labelledby="schedules-heading">
        <h2 id="schedules-heading" style={{ marginTop: 0 }}>
          Schedules
        </h2>
        <QueryTable
          query={schedules}
          loadingLabel="Loading schedules…"
          empty="No schedules yet. Create one below."
          tableLabel="Schedules table"
          pagination={{ page, onPage: (p) => setSearch(p === 1 ? {} : { page: String(p) }), label: 'Schedule pages' }}
          testId="schedules-table"
          columns={scheduleColumns(isAdmin)}
        >
          {(schedule) => <ScheduleRow key={schedule.id} schedule={schedule} isAdmin={isAdmin} onEdit={setEditing} />}
        </QueryTable>
      </section>
      {editing ? (
        <EditSchedule schedule={editing} onDone={() => setEditing(null)} />
      ) : (
        <section className="card" aria-labelledby="create-heading">
          <h2 id="create-heading" style={{ marginTop: 0 }}>
            Create a schedule
          </h2>
          <CreateSchedule />
        </section>
      )}
    </>
  );
}
