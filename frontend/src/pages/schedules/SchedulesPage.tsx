import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { errorMessage } from '../../api/client';
import { deleteSchedule, getSchedule, listSchedules, pauseSchedule, resumeSchedule } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { ScheduleView } from '../../api/types';
import { useIsAdmin } from '../../auth/hooks';
import { ConfirmAction } from '../../components/ConfirmAction';
import { Pagination } from '../../components/Pagination';
import { StatusBadge } from '../../components/StatusBadge';
import { Empty, ErrorState, Loading } from '../../components/states';
import { formatDateTime, shortId } from '../../lib/format';
import { notify } from '../../lib/notices';
import { usePageTitle } from '../../lib/usePageTitle';
import { usePollWhileOffline } from '../../live/context';
import { ScheduleForm } from './ScheduleForm';
import { TableRegion } from '../../components/TableRegion';

function FireHistory({ schedule }: { schedule: ScheduleView }) {
  const poll = usePollWhileOffline(10_000);
  const detail = useQuery({
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
        <table>
          <caption className="visually-hidden">Last fires of {schedule.name}</caption>
          <thead>
            <tr>
              <th scope="col">Fire time</th>
              <th scope="col">Fired at</th>
              <th scope="col">Job</th>
              <th scope="col">Job status</th>
            </tr>
          </thead>
          <tbody>
            {fires.map((fire) => (
              <tr key={`${fire.fireTime}-${fire.jobId}`}>
                <td className="nowrap">{formatDateTime(fire.fireTime)}</td>
                <td className="nowrap">{formatDateTime(fire.firedAt)}</td>
                <td>
                  <Link to={`/jobs/${fire.jobId}`} className="mono">
                    {shortId(fire.jobId)}
                  </Link>
                </td>
                <td>{fire.jobStatus ? <StatusBadge status={fire.jobStatus} /> : <span className="muted">not recorded yet</span>}</td>
              </tr>
            ))}
          </tbody>
        </table>
      )}
    </div>
  );
}

function ScheduleRow({ schedule, isAdmin }: { schedule: ScheduleView; isAdmin: boolean }) {
  const client = useQueryClient();
  const [open, setOpen] = useState(false);
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
  const remove = useMutation({
    mutationFn: () => deleteSchedule(schedule.id),
    onSuccess: () => done(`Schedule "${schedule.name}" deleted`),
    onError: fail,
  });
  const type = typeof schedule.jobTemplate.type === 'string' ? schedule.jobTemplate.type : '?';
  const historyId = `history-${schedule.id}`;
  return (
    <>
      <tr data-testid="schedule-row" data-schedule-name={schedule.name}>
        <th scope="row">{schedule.name}</th>
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
              <Link to={`/jobs/${schedule.lastJobId}`} className="mono">
                {shortId(schedule.lastJobId)}
              </Link>
            </div>
          ) : null}
        </td>
        {isAdmin ? <td>{schedule.owner}</td> : null}
        <td>
          <div className="toolbar" style={{ margin: 0 }}>
            <button
              type="button"
              onClick={() => toggle.mutate()}
              disabled={toggle.isPending}
              aria-label={`${schedule.paused ? 'Resume' : 'Pause'} schedule ${schedule.name}`}
            >
              {schedule.paused ? 'Resume' : 'Pause'}
            </button>
            <button
              type="button"
              aria-expanded={open}
              aria-controls={historyId}
              onClick={() => setOpen((o) => !o)}
              aria-label={`Fire history of ${schedule.name}`}
            >
              History
            </button>
            <ConfirmAction
              label="Delete"
              confirmLabel="Yes, delete"
              question={`Delete "${schedule.name}"?`}
              onConfirm={() => remove.mutate()}
              busy={remove.isPending}
              testId={`delete-schedule-${schedule.name}`}
            />
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

export function SchedulesPage() {
  usePageTitle('Schedules');
  const isAdmin = useIsAdmin();
  const [search, setSearch] = useSearchParams();
  const page = Number(search.get('page') ?? '1') || 1;
  const poll = usePollWhileOffline(15_000);
  const schedules = useQuery({
    queryKey: queryKeys.scheduleList(page),
    queryFn: ({ signal }) => listSchedules({ pageNumber: page, pageSize: 20 }, signal),
    placeholderData: keepPreviousData,
    // next/last fire times move with the clock and no event says so
    refetchInterval: poll === false ? 30_000 : poll,
  });
  const items = schedules.data?.items ?? [];
  return (
    <>
      <h1>Schedules</h1>
      <section className="card" aria-labelledby="schedules-heading">
        <h2 id="schedules-heading" style={{ marginTop: 0 }}>
          Your schedules
        </h2>
        {schedules.isPending ? <Loading label="Loading schedules…" /> : null}
        {schedules.isError ? <ErrorState error={schedules.error} onRetry={() => void schedules.refetch()} /> : null}
        {schedules.data && items.length === 0 ? <Empty>No schedules yet. Create one below.</Empty> : null}
        {items.length > 0 ? (
          <TableRegion label="Schedules table">
            <table data-testid="schedules-table">
              <thead>
                <tr>
                  <th scope="col">Name</th>
                  <th scope="col">Cron</th>
                  <th scope="col">Job type</th>
                  <th scope="col">State</th>
                  <th scope="col">Next fire</th>
                  <th scope="col">Last fire</th>
                  {isAdmin ? <th scope="col">Owner</th> : null}
                  <th scope="col">Actions</th>
                </tr>
              </thead>
              <tbody>
                {items.map((schedule) => (
                  <ScheduleRow key={schedule.id} schedule={schedule} isAdmin={isAdmin} />
                ))}
              </tbody>
            </table>
          </TableRegion>
        ) : null}
        {schedules.data ? (
          <Pagination
            page={page}
            totalPages={schedules.data.totalPages}
            totalItems={schedules.data.totalItems}
            onPage={(p) => setSearch(p === 1 ? {} : { page: String(p) })}
            label="Schedule pages"
          />
        ) : null}
      </section>
      <section className="card" aria-labelledby="create-heading">
        <h2 id="create-heading" style={{ marginTop: 0 }}>
          Create a schedule
        </h2>
        <ScheduleForm />
      </section>
    </>
  );
}
