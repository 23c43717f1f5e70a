import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type SyntheticEvent } from 'react';
import { getProjectFlow, setProjectFlow } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { ProjectFlowView } from '../../api/types';
import { Denied } from '../../components/Denied';
import { ErrorSummary } from '../../components/ErrorSummary';
import { InputField } from '../../components/Field';
import { ErrorState, Loading } from '../../components/states';
import { notify } from '../../lib/notices';
import {
  formatQuota,
  lastChanged,
  MAX_WEIGHT,
  MIN_WEIGHT,
  PROJECT_FLOW_FIELD_PATHS,
  PROJECT_FLOW_LABELS,
  projectFlowChange,
  projectFlowValues,
  validateProjectFlow,
} from '../../lib/projectFlowForm';
import { useApiForm } from '../../lib/useApiForm';
import { usePollWhileOffline } from '../../live/context';
import { deniedReason, useRights } from '../../project/access';
import { useProjectId } from '../../project/navigation';
import { useScopedQuery } from '../../project/useScopedQuery';

const WEIGHT_MEANS = 'share of the workers when several projects wait';
const FORM = 'flow';
const FORM_PANEL = 'project-flow-edit';
const LABELS = Object.fromEntries(Object.entries(PROJECT_FLOW_LABELS).map(([path, label]) => [`${FORM}.${path}`, label]));
const CONTROLS: ReadonlySet<string> = new Set(PROJECT_FLOW_FIELD_PATHS.map((path) => `${FORM}.${path}`));

interface FormProps {
  projectId: string;
  /** The settings as the form opened on them: a change sends what differs from these. */
  before: ProjectFlowView;
  projectName: string;
  onClose: () => void;
}

/** "Change weight and quotas": PUT with the fields changed, an emptied quota as null. */
function ProjectFlowForm({ projectId, before, projectName, onClose }: FormProps) {
  const client = useQueryClient();
  const [values, setValues] = useState(() => projectFlowValues(before));
  const { errors, message, attempt, busy, run } = useApiForm(FORM);
  const heading = useRef<HTMLHeadingElement>(null);

  useEffect(() => {
    heading.current?.focus();
  }, []);

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    const { errors: found, settings } = validateProjectFlow(values, FORM);
    const saved = await run(found, async () => {
      if (!settings) return;
      const body = projectFlowChange(before, settings);
      if (Object.keys(body).length === 0) {
        notify(`Nothing to change in the settings of ${projectName}`);
        return;
      }
      const updated = await setProjectFlow(projectId, body);
      client.setQueriesData<ProjectFlowView>({ queryKey: queryKeys.projectFlow(projectId) }, updated);
      notify(`Settings of ${projectName} saved`);
    });
    if (saved) onClose();
  };

  const field = (path: (typeof PROJECT_FLOW_FIELD_PATHS)[number], hint: string) => (
    <InputField
      path={`${FORM}.${path}`}
      label={PROJECT_FLOW_LABELS[path]}
      hint={hint}
      error={errors[`${FORM}.${path}`]}
      inputMode="numeric"
      autoComplete="off"
      value={values[path]}
      onChange={(value) => setValues((v) => ({ ...v, [path]: value }))}
    />
  );

  return (
    <div id={FORM_PANEL} data-testid="project-flow-edit">
      <h3 id="project-flow-edit-heading" ref={heading} tabIndex={-1}>
        Change weight and quotas
      </h3>
      <form onSubmit={(e) => void submit(e)} noValidate aria-labelledby="project-flow-edit-heading">
        <ErrorSummary errors={errors} known={CONTROLS} labels={LABELS} message={message} focusKey={attempt} title="The settings were not saved" />
        <div className="field-row">
          {field('weight', `${MIN_WEIGHT} to ${MAX_WEIGHT}: ${WEIGHT_MEANS}`)}
          {field('maxWaiting', 'Jobs waiting (not running) at most; empty: none')}
          {field('maxSubmittedPerDay', 'Jobs submitted per day at most; empty: none')}
          {field('maxRunning', 'Jobs running at once across all its queues at most (the rest wait, queued); empty: none')}
        </div>
        <div className="toolbar">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save settings'}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </div>
  );
}

/** The chosen project's settings, with its admins' form. */
function ProjectFlow({ projectId }: { projectId: string }) {
  const rights = useRights(projectId);
  const poll = usePollWhileOffline(5_000);
  const flow = useScopedQuery({
    queryKey: queryKeys.projectFlow(projectId),
    queryFn: ({ signal }) => getProjectFlow(projectId, signal),
    // another admin's change comes with no event: read it again every 15 s
    refetchInterval: poll === false ? 15_000 : poll,
  });
  // the settings the form opened on (null: closed)
  const [editing, setEditing] = useState<ProjectFlowView | null>(null);
  const openButton = useRef<HTMLButtonElement>(null);
  const wasEditing = useRef(false);
  useEffect(() => {
    // the form closed (saved or cancelled): back to the button that opened it
    if (wasEditing.current && !editing) openButton.current?.focus();
    wasEditing.current = editing !== null;
  }, [editing]);

  if (flow.isPending) return <Loading label="Loading the project's settings…" />;
  if (flow.isError) {
    return <ErrorState error={flow.error} title="Could not load the project's settings" onRetry={() => void flow.refetch()} />;
  }
  const view = flow.data;
  const projectName = rights.name ?? 'this project';
  return (
    <>
      <p className="muted" style={{ marginTop: 0 }}>
        Fair dispatch: when several projects have jobs waiting in the same queue, each round starts as many jobs of a project
        as its weight. Quotas are checked at submission: what would go past one is refused.
      </p>
      <dl className="props" data-testid="project-flow-values">
        <dt>Weight</dt>
        <dd>
          <strong data-testid="project-weight">{view.weight}</strong> <span className="muted">({WEIGHT_MEANS})</span>
        </dd>
        <dt>{PROJECT_FLOW_LABELS.maxWaiting}</dt>
        <dd data-testid="project-max-waiting">{formatQuota(view.maxWaiting)}</dd>
        <dt>{PROJECT_FLOW_LABELS.maxSubmittedPerDay}</dt>
        <dd data-testid="project-max-submitted-per-day">{formatQuota(view.maxSubmittedPerDay)}</dd>
        <dt>{PROJECT_FLOW_LABELS.maxRunning}</dt>
        <dd data-testid="project-max-running">{formatQuota(view.maxRunning)}</dd>
        <dt>Last changed</dt>
        <dd data-testid="project-flow-changed">{lastChanged(view)}</dd>
      </dl>
      {rights.manage ? (
        <>
          <div className="toolbar">
            <button
              type="button"
              ref={openButton}
              aria-expanded={editing !== null}
              aria-controls={editing ? FORM_PANEL : undefined}
              onClick={() => setEditing(editing ? null : view)}
            >
              Change weight and quotas
            </button>
          </div>
          {editing ? (
            <ProjectFlowForm projectId={projectId} before={editing} projectName={projectName} onClose={() => setEditing(null)} />
          ) : null}
        </>
      ) : (
        <Denied testId="project-flow-denied">{deniedReason(rights, 'manage', 'changing the weight and quotas')}</Denied>
      )}
    </>
  );
}

/**
 * The chosen project's weight in fair dispatch and its quotas (GET /api/project-flow/{id}),
 * who changed them last and when; its admins change them (PUT, the fields changed).
 */
export function ProjectFlowPanel() {
  const projectId = useProjectId();
  return (
    <section className="card" aria-labelledby="project-flow-heading" data-testid="project-flow">
      <h2 id="project-flow-heading">Project settings</h2>
      {projectId ? (
        <ProjectFlow key={projectId} projectId={projectId} />
      ) : (
        <p className="muted" data-testid="project-flow-choose">
          With all projects shown, choose one (Project, at the top) to see its weight and quotas.
        </p>
      )}
    </section>
  );
}
