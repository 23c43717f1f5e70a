import { useQueryClient } from '@tanstack/react-query';
import { useMemo, useState, type SyntheticEvent } from 'react';
import { errorMessage, isApiError } from '../../api/client';
import { createSchedule, editSchedule } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { ScheduleView } from '../../api/types';
import { CronPreview } from '../../components/CronPreview';
import { ErrorSummary } from '../../components/ErrorSummary';
import { Field, InputField } from '../../components/Field';
import { JobTypeSelect } from '../../components/JobTypeChoice';
import { JobTypePayload } from '../../components/JobTypePayload';
import { LimitFields } from '../../components/LimitFields';
import { PriorityOptions } from '../../components/PriorityOptions';
import { RetryFields } from '../../components/RetryFields';
import { browserTimeZone, CRON_PRESETS, timeZones } from '../../lib/cron';
import type { FieldErrors } from '../../lib/jobForm';
import { payloadFieldLabels } from '../../lib/jobTypes';
import { notify } from '../../lib/notices';
import { emptyScheduleForm, scheduleApiErrors, validateScheduleForm } from '../../lib/scheduleForm';
import { switchRawMode } from '../../lib/schemaForm';
import { useJobTemplateForm } from '../../lib/useJobTemplateForm';
import { editBody, formFromSchedule } from './scheduleEdit';

const PAYLOAD = 'jobTemplate.payload';

const LABELS: Record<string, string> = {
  name: 'Name',
  cron: 'Cron',
  timezone: 'Time zone',
  'jobTemplate.type': 'Job type',
  'jobTemplate.priority': 'Priority',
  'jobTemplate.maxAttempts': 'Max attempts',
  'jobTemplate.timeoutSeconds': 'Timeout',
  'jobTemplate.retryPolicy': 'Retry policy',
  [PAYLOAD]: 'Payload',
};

interface Props {
  onCreated?: () => void;
  /** Edit this schedule (its name stays) instead of creating one. */
  schedule?: ScheduleView;
  /** After an edit was saved, or given up (Cancel). */
  onDone?: () => void;
}

/** Create a schedule, or edit one: its cron, time zone and job template. */
export function ScheduleForm({ onCreated, schedule, onDone }: Props) {
  const client = useQueryClient();
  const zones = useMemo(() => timeZones(), []);
  const form = useJobTemplateForm(() => (schedule ? formFromSchedule(schedule) : emptyScheduleForm(browserTimeZone())));
  const { values, setValues, set, policies, jobTypes, types, plan, payload } = form;
  const editing = schedule !== undefined;
  const [shownInFields, setShownInFields] = useState(!editing);
  if (!shownInFields && plan && payload) {
    // an edit starts from the stored payload as JSON; once the type's form is known, show it in fields
    setShownInFields(true);
    const fields = switchRawMode(plan, payload, false);
    if ('state' in fields) form.setPayload(fields.state);
  }
  const [errors, setErrors] = useState<FieldErrors>({});
  const [message, setMessage] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [busy, setBusy] = useState(false);
  const labels = useMemo(
    () => ({ ...LABELS, ...payloadFieldLabels(plan, payload?.rawMode === true, PAYLOAD) }),
    [plan, payload?.rawMode],
  );

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    setMessage(null);
    const { errors: found, body } = validateScheduleForm(values, plan ?? undefined);
    setErrors(found);
    if (!body) {
      setAttempt((n) => n + 1);
      return;
    }
    setBusy(true);
    try {
      if (schedule) {
        const saved = await editSchedule(schedule.id, editBody(body));
        notify(`Schedule "${saved.name}" saved`);
        void client.invalidateQueries({ queryKey: queryKeys.schedules });
        onDone?.();
        return;
      }
      const created = await createSchedule(body);
      notify(`Schedule "${created.name}" created`);
      setValues(emptyScheduleForm(values.timezone));
      setErrors({});
      void client.invalidateQueries({ queryKey: queryKeys.schedules });
      onCreated?.();
    } catch (error) {
      if (isApiError(error) && error.details.length > 0) {
        const fieldErrors = scheduleApiErrors(error.details);
        setErrors(form.foldErrors(fieldErrors, PAYLOAD));
      }
      setMessage(isApiError(error) && error.message === 'request validation failed' ? null : errorMessage(error));
      setAttempt((n) => n + 1);
    } finally {
      setBusy(false);
    }
  };

  return (
    <form
      onSubmit={(e) => void submit(e)}
      noValidate
      aria-label={schedule ? `Edit schedule ${schedule.name}` : 'Create a schedule'}
      data-testid={schedule ? 'schedule-edit-form' : 'schedule-form'}
    >
      <ErrorSummary
        errors={errors}
        labels={labels}
        message={message}
        focusKey={attempt}
        title={schedule ? 'The schedule was not saved' : 'The schedule was not created'}
      />
      <div className="grid grid-2">
        <div>
          {schedule ? null : (
            <InputField
              path="name"
              label="Name"
              hint="Unique among your schedules"
              error={errors.name}
              value={values.name}
              maxLength={200}
              onChange={(name) => set({ name })}
            />
          )}
          <InputField
            path="cron"
            label="Cron expression"
            hint="5 fields: minute hour day-of-month month day-of-week, e.g. 0 3 * * 1-5"
            error={errors.cron}
            className="mono"
            value={values.cron}
            onChange={(cron) => set({ cron })}
            autoComplete="off"
            spellCheck={false}
          />
          <div className="field">
            <label htmlFor="cron-preset">Start from a preset</label>
            <select
              id="cron-preset"
              value=""
              onChange={(e) => {
                if (e.target.value) set({ cron: e.target.value });
              }}
            >
              <option value="">Choose a preset…</option>
              {CRON_PRESETS.map((preset) => (
                <option key={preset.cron} value={preset.cron}>
                  {preset.label} ({preset.cron})
                </option>
              ))}
            </select>
          </div>
          <Field path="timezone" label="Time zone" hint="The cron runs on this zone's wall clock" error={errors.timezone}>
            {(p) => (
              <select {...p} value={values.timezone} onChange={(e) => set({ timezone: e.target.value })}>
                {zones.includes(values.timezone) ? null : <option value={values.timezone}>{values.timezone}</option>}
                {zones.map((zone) => (
                  <option key={zone} value={zone}>
                    {zone}
                  </option>
                ))}
              </select>
            )}
          </Field>
        </div>
        <CronPreview cron={values.cron} timeZone={values.timezone} />
      </div>

      <fieldset>
        <legend>The job each fire creates</legend>
        <div className="field-row">
          <Field path="jobTemplate.type" label="Job type" error={errors['jobTemplate.type']}>
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
          <Field path="jobTemplate.priority" label="Priority" error={errors['jobTemplate.priority']}>
            {(p) => (
              <select {...p} value={values.priority} onChange={(e) => set({ priority: e.target.value })}>
                <PriorityOptions />
              </select>
            )}
          </Field>
          <LimitFields
            values={values}
            onChange={set}
            errors={errors}
            hints={{ maxAttempts: 'Optional, 1 to 20', timeoutSeconds: 'Optional, 1 to 1,700' }}
            prefix="jobTemplate"
          />
        </div>
        <JobTypePayload form={form} errors={errors} prefix={PAYLOAD} />
        <RetryFields
          values={values.retry}
          onChange={(retry) => set({ retry })}
          errors={errors}
          policies={policies.data?.items}
          prefix="jobTemplate.retryPolicy"
        />
      </fieldset>
      {schedule ? (
        <div className="toolbar">
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Saving…' : 'Save changes'}
          </button>
          <button type="button" onClick={() => onDone?.()} disabled={busy}>
            Cancel
          </button>
        </div>
      ) : (
        <button type="submit" className="primary" disabled={busy}>
          {busy ? 'Creating…' : 'Create schedule'}
        </button>
      )}
    </form>
  );
}
