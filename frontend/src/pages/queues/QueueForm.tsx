import { useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState, type SyntheticEvent } from 'react';
import { createQueue, listRetryPolicies, updateQueue } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { RATE_PERS, type QueueView, type RetryPolicyView } from '../../api/types';
import { ErrorSummary } from '../../components/ErrorSummary';
import { Field, FieldErrorText, InputField } from '../../components/Field';
import { PriorityOptions } from '../../components/PriorityOptions';
import { notify } from '../../lib/notices';
import {
  MAX_TIMEOUT_SECONDS,
  QUEUE_FIELD_LABELS,
  QUEUE_FIELD_PATHS,
  queueCreateBody,
  queueFormValues,
  queuePatchBody,
  validateQueueForm,
  type QueueFormValues,
} from '../../lib/queueForm';
import { useApiForm } from '../../lib/useApiForm';
import { useScopedQuery } from '../../project/useScopedQuery';

/** The labels of a form's field paths under `prefix` (its error summary's links). */
function labelsUnder(prefix: string): Record<string, string> {
  return Object.fromEntries(Object.entries(QUEUE_FIELD_LABELS).map(([path, label]) => [`${prefix}.${path}`, label]));
}

/** The paths with a control of their own (the summary links to them; the rest are listed as text). */
function controlsUnder(prefix: string): ReadonlySet<string> {
  return new Set(QUEUE_FIELD_PATHS.map((path) => `${prefix}.${path}`));
}

/** The project's stored retry policies (and the shared ones), for the default policy select. */
function useRetryPolicies(): RetryPolicyView[] | undefined {
  const policies = useScopedQuery({
    queryKey: queryKeys.retryPolicies,
    queryFn: ({ signal }) => listRetryPolicies(signal),
    staleTime: 60_000,
  });
  return policies.data?.items;
}

interface FieldsProps {
  /** The form's field paths start with it (distinct ids for two forms on one page). */
  prefix: string;
  values: QueueFormValues;
  onChange: (patch: Partial<QueueFormValues>) => void;
  errors: Record<string, string>;
  create: boolean;
}

/** A queue's limits and defaults: each empty field is "no limit" ("no default"). */
function QueueFields({ prefix, values, onChange, errors, create }: FieldsProps) {
  const policies = useRetryPolicies();
  const at = (path: string) => `${prefix}.${path}`;
  const policyNames = (policies ?? []).map((policy) => policy.name);
  // the queue's policy stays choosable while the list is loading, or when it is not listed
  if (values.defaultRetryPolicy && !policyNames.includes(values.defaultRetryPolicy)) {
    policyNames.unshift(values.defaultRetryPolicy);
  }
  return (
    <>
      {create ? (
        <InputField
          path={at('name')}
          label="Name"
          hint="The queue the jobs' handlers name (@handler(queue=…)): 1 to 63 of a-z, 0-9, - and _, starting with a letter"
          error={errors[at('name')]}
          value={values.name}
          maxLength={63}
          autoComplete="off"
          spellCheck={false}
          onChange={(name) => onChange({ name })}
        />
      ) : null}
      <fieldset>
        <legend>Limits (empty: no limit)</legend>
        <div className="field-row">
          <InputField
            path={at('maxConcurrency')}
            label="Max concurrency"
            hint="Running jobs at most, across every worker"
            error={errors[at('maxConcurrency')]}
            inputMode="numeric"
            value={values.maxConcurrency}
            onChange={(maxConcurrency) => onChange({ maxConcurrency })}
          />
          <InputField
            path={at('rateLimit.limit')}
            label="Rate limit"
            hint="Jobs started per second or minute"
            error={errors[at('rateLimit.limit')]}
            inputMode="numeric"
            value={values.rateLimit}
            onChange={(rateLimit) => onChange({ rateLimit })}
          />
          <Field path={at('rateLimit.per')} label="Per" error={errors[at('rateLimit.per')]}>
            {(p) => (
              <select
                {...p}
                value={values.ratePer}
                onChange={(e) => onChange({ ratePer: e.target.value === 'minute' ? 'minute' : 'second' })}
              >
                {RATE_PERS.map((per) => (
                  <option key={per} value={per}>
                    {per}
                  </option>
                ))}
              </select>
            )}
          </Field>
          <InputField
            path={at('concurrencyKey.field')}
            label="Key field"
            hint="A top-level payload field, as customerId"
            error={errors[at('concurrencyKey.field')]}
            className="mono"
            autoComplete="off"
            spellCheck={false}
            maxLength={100}
            value={values.keyField}
            onChange={(keyField) => onChange({ keyField })}
          />
          <InputField
            path={at('concurrencyKey.limit')}
            label="Running per key value"
            hint="Running jobs at most per value of the key field"
            error={errors[at('concurrencyKey.limit')]}
            inputMode="numeric"
            value={values.keyLimit}
            onChange={(keyLimit) => onChange({ keyLimit })}
          />
        </div>
        <FieldErrorText path={at('rateLimit')} error={errors[at('rateLimit')]} />
        <FieldErrorText path={at('concurrencyKey')} error={errors[at('concurrencyKey')]} />
      </fieldset>
      <fieldset>
        <legend>Defaults for its jobs (empty: none)</legend>
        <p className="muted" style={{ marginTop: 0 }}>
          A job that names no priority, timeout or retry policy takes the queue&apos;s when it is recorded.
        </p>
        <div className="field-row">
          <Field path={at('defaultPriority')} label="Default priority" error={errors[at('defaultPriority')]}>
            {(p) => (
              <select {...p} value={values.defaultPriority} onChange={(e) => onChange({ defaultPriority: e.target.value })}>
                <option value="">None</option>
                <PriorityOptions />
              </select>
            )}
          </Field>
          <InputField
            path={at('defaultTimeoutSeconds')}
            label="Default timeout (seconds)"
            hint={`1 to ${MAX_TIMEOUT_SECONDS.toLocaleString('en')}`}
            error={errors[at('defaultTimeoutSeconds')]}
            inputMode="numeric"
            value={values.defaultTimeoutSeconds}
            onChange={(defaultTimeoutSeconds) => onChange({ defaultTimeoutSeconds })}
          />
          <Field path={at('defaultRetryPolicy')} label="Default retry policy" error={errors[at('defaultRetryPolicy')]}>
            {(p) => (
              <select
                {...p}
                value={values.defaultRetryPolicy}
                onChange={(e) => onChange({ defaultRetryPolicy: e.target.value })}
              >
                <option value="">None</option>
                {policyNames.map((name) => (
                  <option key={name} value={name}>
                    {name}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
      </fieldset>
      {create ? (
        <div className="field">
          <label className="check">
            <input type="checkbox" checked={values.paused} onChange={(e) => onChange({ paused: e.target.checked })} />
            Create paused (its jobs wait until it is resumed)
          </label>
        </div>
      ) : null}
    </>
  );
}

const CREATE = 'queue';

/** "New queue": POST /api/queues in the project that acts. */
export function CreateQueueForm() {
  const client = useQueryClient();
  const [values, setValues] = useState(() => queueFormValues());
  const { errors, message, attempt, busy, run } = useApiForm(CREATE);

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    const { errors: found, settings } = validateQueueForm(values, { create: true, prefix: CREATE });
    await run(found, async () => {
      if (!settings) return;
      const created = await createQueue(queueCreateBody(values.name, settings, values.paused));
      notify(`Queue "${created.name}" created`);
      setValues(queueFormValues());
      void client.invalidateQueries({ queryKey: queryKeys.queueLists });
    });
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label="New queue" data-testid="queue-create-form">
      <ErrorSummary errors={errors} known={controlsUnder(CREATE)} labels={labelsUnder(CREATE)} message={message} focusKey={attempt} title="The queue was not created" />
      <QueueFields prefix={CREATE} values={values} onChange={(patch) => setValues((v) => ({ ...v, ...patch }))} errors={errors} create />
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create queue'}
      </button>
    </form>
  );
}

const EDIT = 'edit';

/** "Edit limits" of one queue: PATCH with the fields changed, an emptied one as null. */
export function EditQueueForm({ queue, onClose }: { queue: QueueView; onClose: () => void }) {
  const client = useQueryClient();
  const [values, setValues] = useState(() => queueFormValues(queue));
  const { errors, message, attempt, busy, run } = useApiForm(EDIT);
  const heading = useRef<HTMLHeadingElement>(null);
  const headingId = 'edit-queue-heading';

  useEffect(() => {
    // opened from a row: focus (which scrolls it into view) its heading, to read on from there
    heading.current?.focus();
  }, [queue.id]);

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    const { errors: found, settings } = validateQueueForm(values, { create: false, prefix: EDIT });
    const saved = await run(found, async () => {
      if (!settings) return;
      const body = queuePatchBody(queue, settings);
      if (Object.keys(body).length === 0) {
        notify(`Nothing to change in "${queue.name}"`);
        return;
      }
      const updated = await updateQueue(queue.id, body);
      notify(`Queue "${updated.name}" saved`);
      void client.invalidateQueries({ queryKey: queryKeys.queueLists });
    });
    if (saved) onClose();
  };

  return (
    <section className="card" aria-labelledby={headingId} id="queue-edit" data-testid="queue-edit">
      <h2 id={headingId} ref={heading} tabIndex={-1} style={{ marginTop: 0 }}>
        Edit limits of <span className="mono">{queue.name}</span>
      </h2>
      <form onSubmit={(e) => void submit(e)} noValidate aria-label={`Edit limits of ${queue.name}`}>
        <ErrorSummary errors={errors} known={controlsUnder(EDIT)} labels={labelsUnder(EDIT)} message={message} focusKey={attempt} title="The queue was not saved" />
        <QueueFields prefix={EDIT} values={values} onChange={(patch) => setValues((v) => ({ ...v, ...patch }))} errors={errors} create={false} />
        <div className="toolbar">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save limits'}
          </button>
          <button type="button" onClick={onClose}>
            Cancel
          </button>
        </div>
      </form>
    </section>
  );
}
