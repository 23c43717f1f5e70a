import { useQueryClient } from '@tanstack/react-query';
import { useMemo, useRef, useState, type SyntheticEvent } from 'react';
import { errorMessage, isApiError } from '../../api/client';
import { getJob, submitJob } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { useIsAdmin } from '../../auth/hooks';
import { ErrorSummary } from '../../components/ErrorSummary';
import { Field, InputField } from '../../components/Field';
import { fieldId } from '../../lib/fieldId';
import { JobTypeSelect } from '../../components/JobTypeChoice';
import { JobTypePayload } from '../../components/JobTypePayload';
import { LimitFields } from '../../components/LimitFields';
import { payloadFieldLabels } from '../../lib/jobTypes';
import { RetryFields } from '../../components/RetryFields';
import { StatusBadge } from '../../components/StatusBadge';
import { newIdempotencyKey } from '../../lib/ids';
import {
  apiFieldErrors,
  emptyJobForm,
  parseIdList,
  validateJobForm,
  type FieldErrors,
  type JobFormValues,
} from '../../lib/jobForm';
import { notify } from '../../lib/notices';
import type { SchemaFormPlan } from '../../lib/schemaFields';
import type { SchemaPayloadState } from '../../lib/schemaForm';
import { useJobTemplateForm } from '../../lib/useJobTemplateForm';
import { useJobRecorded, usePollWhileOffline } from '../../live/context';
import { Link } from '../../project/links';
import { useScopedQuery } from '../../project/useScopedQuery';

function fieldLabels(
  values: JobFormValues,
  plan: SchemaFormPlan | null,
  payload: SchemaPayloadState | null,
): { labels: Record<string, string>; known: Set<string> } {
  const payloadLabels = payloadFieldLabels(plan, payload?.rawMode === true);
  const labels: Record<string, string> = {
    type: 'Job type',
    priority: 'Priority',
    delaySeconds: 'Delay',
    runAt: 'Run at',
    maxAttempts: 'Max attempts',
    timeoutSeconds: 'Timeout',
    retryPolicy: 'Retry policy',
    'retryPolicy.strategy': 'Retry strategy',
    'retryPolicy.baseDelayMs': 'Base delay',
    'retryPolicy.multiplier': 'Multiplier',
    'retryPolicy.maxDelayMs': 'Max delay',
    'retryPolicy.jitter': 'Jitter',
    dependsOn: 'Depends on',
    submittedBy: 'Submit for',
    payload: 'Payload',
    ...payloadLabels,
  };
  const known = new Set(['type', 'priority', 'maxAttempts', 'timeoutSeconds', 'dependsOn', 'payload', ...Object.keys(payloadLabels)]);
  if (values.when === 'delay') known.add('delaySeconds');
  if (values.when === 'runAt') known.add('runAt');
  if (values.retry.mode !== 'default') known.add('retryPolicy');
  if (values.retry.mode === 'inline') {
    for (const name of ['strategy', 'baseDelayMs', 'multiplier', 'maxDelayMs', 'jitter']) known.add(`retryPolicy.${name}`);
  }
  known.add('submittedBy');
  return { labels, known };
}

function SubmittedJob({ jobId }: { jobId: string }) {
  const poll = usePollWhileOffline(2_000);
  const recorded = useJobRecorded(jobId);
  const job = useScopedQuery({
    queryKey: queryKeys.jobDetail(jobId),
    queryFn: ({ signal }) => getJob(jobId, signal),
    enabled: recorded,
    // the job is recorded a moment after the 202: keep asking until it is
    retry: (count, error) => isApiError(error) && error.status === 404 && count < 30,
    retryDelay: 500,
    refetchInterval: (query) => (query.state.data ? poll : 1_000),
  });
  return (
    <div className="card" role="status" data-testid="submit-result">
      <p style={{ margin: 0 }}>
        Job accepted:{' '}
        <Link to={`/jobs/${jobId}`} data-testid="submitted-job-link" className="mono">
          {jobId}
        </Link>
      </p>
      <p style={{ margin: '0.5rem 0 0' }}>
        Status:{' '}
        {job.data ? (
          <span data-testid="submitted-job-status" data-status={job.data.status}>
            <StatusBadge status={job.data.status} />
          </span>
        ) : (
          <span data-testid="submitted-job-status" data-status="accepted">
            accepted, waiting for the scheduler…
          </span>
        )}
      </p>
    </div>
  );
}

export function JobForm() {
  const isAdmin = useIsAdmin();
  const client = useQueryClient();
  const form = useJobTemplateForm(emptyJobForm);
  const { values, setValues, set, policies, jobTypes, types, selected, plan, payload } = form;
  const [errors, setErrors] = useState<FieldErrors>({});
  const [message, setMessage] = useState<string | null>(null);
  const [submitting, setSubmitting] = useState(false);
  const [accepted, setAccepted] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  // A request that never got an answer is repeated with the same key (the API then replays
  // the first answer instead of creating a second job); anything else gets a fresh key.
  const pendingKey = useRef<{ body: string; key: string } | null>(null);

  const { labels, known } = useMemo(() => fieldLabels(values, plan, payload), [values, plan, payload]);

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    setMessage(null);
    setAccepted(null);
    const { errors: found, body } = validateJobForm(values, new Date(), plan ?? undefined);
    setErrors(found);
    if (!body) {
      setAttempt((n) => n + 1);
      return;
    }
    const serialized = JSON.stringify(body);
    const key =
      pendingKey.current?.body === serialized ? pendingKey.current.key : newIdempotencyKey();
    setSubmitting(true);
    try {
      const result = await submitJob(body, key);
      pendingKey.current = null;
      setAccepted(result.jobId);
      notify(`Job ${result.jobId.slice(0, 8)} accepted`);
      void client.invalidateQueries({ queryKey: queryKeys.jobLists });
    } catch (error) {
      if (isApiError(error) && error.code === 'network_error') {
        pendingKey.current = { body: serialized, key };
      } else {
        pendingKey.current = null;
      }
      if (isApiError(error) && error.details.length > 0) {
        const fieldErrors = apiFieldErrors(error.details, body.dependsOn ?? []);
        setErrors(form.foldErrors(fieldErrors));
        setMessage(error.message === 'request validation failed' ? null : error.message);
      } else {
        setMessage(errorMessage(error));
      }
      setAttempt((n) => n + 1);
    } finally {
      setSubmitting(false);
    }
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label="Submit a job" data-testid="job-form">
      <ErrorSummary
        errors={errors}
        known={known}
        labels={labels}
        message={message}
        focusKey={attempt}
        title="The job was not submitted"
      />
      {accepted ? <SubmittedJob jobId={accepted} /> : null}

      <div className="field-row">
        <Field path="type" label="Job type" error={errors.type}>
          {(p) => (
            <JobTypeSelect
              {...p}
              value={values.type}
              onChange={(type) => set({ type })}
              types={types}
              loading={jobTypes.isPending}
            />
          )}
        </Field>
        <fieldset className="field" aria-describedby={errors.priority ? `${fieldId('priority')}-error` : undefined}>
          <legend>Priority</legend>
          <div className="radio-row">
            {(
              [
                ['1', 'Low'],
                ['2', 'Medium'],
                ['3', 'High'],
              ] as const
            ).map(([value, label], index) => (
              <label key={value}>
                <input
                  type="radio"
                  name="priority"
                  id={index === 0 ? fieldId('priority') : undefined}
                  value={value}
                  checked={values.priority === value}
                  onChange={() => set({ priority: value })}
                />
                {label} ({value})
              </label>
            ))}
          </div>
          {errors.priority ? (
            <span id={`${fieldId('priority')}-error`} className="field-error" data-testid="error-priority">
              {errors.priority}
            </span>
          ) : null}
        </fieldset>
      </div>

      <JobTypePayload form={form} errors={errors} />

      <fieldset>
        <legend>When</legend>
        <div className="radio-row">
          {(
            [
              ['now', 'As soon as possible'],
              ['delay', 'After a delay'],
              ['runAt', 'At a time'],
            ] as const
          ).map(([when, label]) => (
            <label key={when}>
              <input type="radio" name="when" value={when} checked={values.when === when} onChange={() => set({ when })} />
              {label}
            </label>
          ))}
        </div>
        {values.when === 'delay' ? (
          <InputField
            path="delaySeconds"
            label="Delay (seconds)"
            hint="0 to 31,536,000 (one year)"
            error={errors.delaySeconds}
            inputMode="numeric"
            value={values.delaySeconds}
            onChange={(delaySeconds) => set({ delaySeconds })}
          />
        ) : null}
        {values.when === 'runAt' ? (
          <InputField
            path="runAt"
            label="Run at (your local time)"
            hint="At most one year ahead; a past time means now"
            error={errors.runAt}
            type="datetime-local"
            value={values.runAt}
            onChange={(runAt) => set({ runAt })}
          />
        ) : null}
      </fieldset>

      <div className="field-row">
        <LimitFields
          values={values}
          onChange={set}
          errors={errors}
          hints={{
            maxAttempts: `1 to 20; empty: the type's default${typeof selected?.maxAttempts === 'number' ? ` (${selected.maxAttempts})` : ''}`,
            timeoutSeconds: `1 to 1,700; empty: the type's default${typeof selected?.timeoutSeconds === 'number' ? ` (${selected.timeoutSeconds} s)` : ''}`,
          }}
        />
      </div>

      <RetryFields
        values={values.retry}
        onChange={(retry) => set({ retry })}
        errors={errors}
        policies={policies.data?.items}
      />

      <Field
        path="dependsOn"
        label="Depends on"
        hint="Optional: ids of your jobs that must succeed first, separated by spaces, commas or lines (at most 100)"
        error={errors.dependsOn}
      >
        {(p) => (
          <textarea
            {...p}
            rows={2}
            value={values.dependsOn}
            onChange={(e) => set({ dependsOn: e.target.value })}
            placeholder="e.g. 4f1c2a9e-…"
          />
        )}
      </Field>
      {values.dependsOn.trim() ? (
        <p className="muted">{parseIdList(values.dependsOn).length} parent job(s).</p>
      ) : null}

      {isAdmin ? (
        <InputField
          path="submittedBy"
          label="Submit for (admins)"
          hint="Optional: another user's email"
          error={errors.submittedBy}
          type="email"
          value={values.submittedBy}
          onChange={(submittedBy) => set({ submittedBy })}
        />
      ) : null}

      <div className="toolbar">
        <button type="submit" className="primary" disabled={submitting}>
          {submitting ? 'Submitting…' : 'Submit job'}
        </button>
        <button
          type="button"
          onClick={() => {
            setValues(emptyJobForm());
            setErrors({});
            setMessage(null);
            setAccepted(null);
          }}
        >
          Reset
        </button>
      </div>
    </form>
  );
}
