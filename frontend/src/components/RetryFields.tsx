import type { RetryPolicyView } from '../api/types';
import type { FieldErrors, RetryValues } from '../lib/jobForm';
import { Field, FieldErrorText } from './Field';
import { fieldId } from '../lib/fieldId';

interface Props {
  values: RetryValues;
  onChange: (values: RetryValues) => void;
  errors: FieldErrors;
  policies: RetryPolicyView[] | undefined;
  prefix?: string;
}

export function RetryFields({ values, onChange, errors, policies, prefix = 'retryPolicy' }: Props) {
  const set = (patch: Partial<RetryValues>) => onChange({ ...values, ...patch });
  const at = (name: string) => `${prefix}.${name}`;
  return (
    <fieldset>
      <legend>Retry policy</legend>
      <div className="radio-row" role="radiogroup" aria-label="Retry policy">
        {(
          [
            ['default', 'Type default'],
            ['named', 'Stored policy'],
            ['inline', 'Custom'],
          ] as const
        ).map(([mode, label]) => (
          <label key={mode}>
            <input
              type="radio"
              name={`${prefix}-mode`}
              value={mode}
              checked={values.mode === mode}
              onChange={() => set({ mode })}
            />
            {label}
          </label>
        ))}
      </div>
      {values.mode === 'named' ? (
        <Field path={prefix} label="Policy" error={errors[prefix]}>
          {(p) => (
            <select {...p} value={values.name} onChange={(e) => set({ name: e.target.value })}>
              <option value="">Choose…</option>
              {(policies ?? []).map((policy) => (
                <option key={policy.name} value={policy.name}>
                  {policy.name} ({policy.strategy}, {policy.baseDelayMs} ms base
                  {policy.maxAttempts ? `, ${policy.maxAttempts} attempts` : ''})
                </option>
              ))}
            </select>
          )}
        </Field>
      ) : null}
      {values.mode === 'inline' ? (
        <>
          <p className="muted" id={fieldId(prefix)}>
            Empty fields take the job type&apos;s defaults.
          </p>
          <div className="field-row">
            <Field path={at('strategy')} label="Strategy" error={errors[at('strategy')]}>
              {(p) => (
                <select
                  {...p}
                  value={values.strategy}
                  onChange={(e) => set({ strategy: e.target.value as RetryValues['strategy'] })}
                >
                  <option value="">Default</option>
                  <option value="fixed">Fixed</option>
                  <option value="linear">Linear</option>
                  <option value="exponential">Exponential</option>
                </select>
              )}
            </Field>
            <Field path={at('baseDelayMs')} label="Base delay (ms)" hint="0 to 86,400,000" error={errors[at('baseDelayMs')]}>
              {(p) => (
                <input {...p} inputMode="numeric" value={values.baseDelayMs} onChange={(e) => set({ baseDelayMs: e.target.value })} />
              )}
            </Field>
            <Field path={at('multiplier')} label="Multiplier" hint="1 to 100" error={errors[at('multiplier')]}>
              {(p) => (
                <input {...p} inputMode="decimal" value={values.multiplier} onChange={(e) => set({ multiplier: e.target.value })} />
              )}
            </Field>
            <Field path={at('maxDelayMs')} label="Max delay (ms)" hint="At least the base delay" error={errors[at('maxDelayMs')]}>
              {(p) => (
                <input {...p} inputMode="numeric" value={values.maxDelayMs} onChange={(e) => set({ maxDelayMs: e.target.value })} />
              )}
            </Field>
            <Field path={at('jitter')} label="Jitter" error={errors[at('jitter')]}>
              {(p) => (
                <select {...p} value={values.jitter} onChange={(e) => set({ jitter: e.target.value as RetryValues['jitter'] })}>
                  <option value="">Default</option>
                  <option value="true">On (0.5x to 1.5x)</option>
                  <option value="false">Off</option>
                </select>
              )}
            </Field>
          </div>
          <FieldErrorText path={prefix} error={errors[prefix]} />
        </>
      ) : null}
      {values.mode === 'default' ? <FieldErrorText path={prefix} error={errors[prefix]} /> : null}
    </fieldset>
  );
}
