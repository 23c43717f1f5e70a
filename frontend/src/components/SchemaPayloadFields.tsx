import { useState } from 'react';
import { fieldId } from '../lib/fieldId';
import type { FieldErrors } from '../lib/jobForm';
import { fieldHint, isMultiline, isTristate, schemaSummary, type SchemaField, type SchemaFormPlan } from '../lib/schemaFields';
import { switchRawMode, type SchemaPayloadState } from '../lib/schemaForm';
import { Field, FieldErrorText } from './Field';
import { JsonBlock } from './JsonBlock';
import { SchemaFileField } from './SchemaFileField';

interface Props {
  plan: SchemaFormPlan;
  state: SchemaPayloadState;
  onChange: (state: SchemaPayloadState) => void;
  errors: FieldErrors;
  /** API path prefix of the payload. */
  prefix?: string;
}

const INPUT_TYPES: Record<string, string> = {
  email: 'email',
  uri: 'url',
  date: 'date',
  'date-time': 'datetime-local',
};

function SchemaInput({
  field,
  value,
  onChange,
  error,
  path,
}: {
  field: SchemaField;
  value: string;
  onChange: (value: string) => void;
  error: string | undefined;
  path: string;
}) {
  const hint = fieldHint(field);
  if (field.kind === 'boolean' && !isTristate(field)) {
    // a checkbox: always sent (unchecked is false), so never marked required
    const id = fieldId(path);
    const describedBy = [hint ? `${id}-hint` : '', error ? `${id}-error` : ''].filter(Boolean).join(' ');
    return (
      <div className="field">
        <label className="check">
          <input
            type="checkbox"
            id={id}
            name={path}
            checked={value === 'true'}
            onChange={(e) => onChange(String(e.target.checked))}
            aria-invalid={Boolean(error)}
            aria-describedby={describedBy || undefined}
          />
          {field.label}
        </label>
        {hint ? (
          <span id={`${id}-hint`} className="hint">
            {hint}
          </span>
        ) : null}
        <FieldErrorText path={path} error={error} />
      </div>
    );
  }
  const required = field.required && !field.nullable;
  return (
    <Field path={path} label={field.label} hint={hint} error={error} required={required}>
      {(p) => {
        switch (field.kind) {
          case 'boolean':
            return (
              <select {...p} value={value} onChange={(e) => onChange(e.target.value)}>
                <option value="">{field.nullable ? 'None (null)' : 'Not set'}</option>
                <option value="true">Yes (true)</option>
                <option value="false">No (false)</option>
              </select>
            );
          case 'choice':
            return (
              <select {...p} value={value} onChange={(e) => onChange(e.target.value)}>
                {required && value !== '' ? null : <option value="">{required ? 'Choose…' : field.nullable ? 'None (null)' : 'Not set'}</option>}
                {field.options.map((option) => (
                  <option key={JSON.stringify(option)} value={JSON.stringify(option)}>
                    {String(option)}
                  </option>
                ))}
              </select>
            );
          case 'number':
          case 'integer':
            return (
              <input
                {...p}
                inputMode={field.kind === 'integer' ? 'numeric' : 'decimal'}
                value={value}
                onChange={(e) => onChange(e.target.value)}
              />
            );
          case 'json':
            return (
              <textarea
                {...p}
                className="mono"
                rows={4}
                spellCheck={false}
                value={value}
                onChange={(e) => onChange(e.target.value)}
              />
            );
          case 'file': // SchemaFileField
          case 'text':
            return isMultiline(field) ? (
              <textarea {...p} rows={4} value={value} onChange={(e) => onChange(e.target.value)} />
            ) : (
              <input
                {...p}
                type={INPUT_TYPES[field.format ?? ''] ?? 'text'}
                autoComplete="off"
                value={value}
                onChange={(e) => onChange(e.target.value)}
              />
            );
        }
      }}
    </Field>
  );
}

/** A schema's prose: docstring-style ``code`` (pydantic takes a model's docstring) as code. */
function SchemaText({ text }: { text: string }) {
  return (
    <>
      {text.split(/``(.+?)``/).map((part, index) => (index % 2 === 1 ? <code key={index}>{part}</code> : part))}
    </>
  );
}

/**
 * The payload inputs of a job type, built from its JSON Schema (lib/schemaForm.ts) as the type
 * registry lists it, with a switch to raw JSON; a schema the form cannot show is written as raw
 * JSON only. The schema's `description` says what the type does.
 */
export function SchemaPayloadFields({ plan, state, onChange, errors, prefix = 'payload' }: Props) {
  const [switchError, setSwitchError] = useState<string | null>(null);
  const raw = plan.kind === 'raw' || state.rawMode;
  const anyRequired = plan.kind === 'form' && plan.fields.some((f) => f.required && !f.nullable && f.kind !== 'boolean');

  const toggle = (rawMode: boolean) => {
    const result = switchRawMode(plan, state, rawMode);
    if ('error' in result) {
      setSwitchError(result.error);
      return;
    }
    setSwitchError(null);
    onChange(result.state);
  };

  const { description } = schemaSummary(plan.schema);
  return (
    <div data-testid="schema-payload" data-mode={raw ? 'raw' : 'form'}>
      {description ? (
        <p className="muted" data-testid="schema-description">
          <SchemaText text={description} />
        </p>
      ) : null}
      {plan.kind === 'raw' ? (
        <p className="muted" data-testid="schema-form-unsupported">
          The form cannot show this type&apos;s payload schema ({plan.reason}): write the payload as JSON.
        </p>
      ) : (
        <div className="field">
          <label className="check">
            <input
              type="checkbox"
              checked={state.rawMode}
              onChange={(e) => toggle(e.target.checked)}
              aria-describedby={switchError ? 'schema-raw-switch-error' : undefined}
            />
            Edit as raw JSON
          </label>
          {switchError ? (
            <span id="schema-raw-switch-error" className="field-error" role="alert" data-testid="schema-raw-switch-error">
              {switchError}
            </span>
          ) : null}
        </div>
      )}

      {raw ? (
        <Field
          path={prefix}
          label="Payload (JSON object)"
          hint="Checked against the type's schema when submitted."
          error={errors[prefix]}
        >
          {(p) => (
            <textarea
              {...p}
              className="mono"
              rows={10}
              spellCheck={false}
              value={state.raw}
              onChange={(e) => {
                setSwitchError(null);
                onChange({ ...state, raw: e.target.value });
              }}
            />
          )}
        </Field>
      ) : (
        <>
          {anyRequired ? (
            // screen readers hear "required" from each control (aria-required)
            <p className="muted" aria-hidden="true">
              Fields marked * are required.
            </p>
          ) : null}
          {plan.fields.map((field) =>
            field.kind === 'file' ? (
              <SchemaFileField
                key={field.name}
                field={field}
                path={`${prefix}.${field.name}`}
                value={state.values[field.name] ?? ''}
                fileName={state.fileNames?.[field.name]}
                error={errors[`${prefix}.${field.name}`]}
                onChange={(value, fileName) => {
                  const { [field.name]: _previous, ...fileNames } = state.fileNames ?? {};
                  onChange({
                    ...state,
                    values: { ...state.values, [field.name]: value },
                    fileNames: fileName === undefined ? fileNames : { ...fileNames, [field.name]: fileName },
                  });
                }}
              />
            ) : (
              <SchemaInput
                key={field.name}
                field={field}
                path={`${prefix}.${field.name}`}
                value={state.values[field.name] ?? ''}
                error={errors[`${prefix}.${field.name}`]}
                onChange={(value) => onChange({ ...state, values: { ...state.values, [field.name]: value } })}
              />
            ),
          )}
        </>
      )}
      <details>
        <summary>JSON Schema of the payload</summary>
        <JsonBlock value={plan.schema} label="JSON Schema of the payload" />
      </details>
    </div>
  );
}
