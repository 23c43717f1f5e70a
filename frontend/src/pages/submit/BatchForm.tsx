import { useState, type SyntheticEvent } from 'react';
import { errorMessage, isApiError } from '../../api/client';
import { submitBatch } from '../../api/endpoints';
import type { BatchCreate, ErrorDetail } from '../../api/types';
import { BatchProgress } from '../../components/BatchProgress';
import { Field } from '../../components/Field';
import { parseBatchCsv, parseBatchJson } from '../../lib/batch';
import { batchCsvExample, batchJsonExample } from '../../lib/batchExamples';
import { newIdempotencyKey } from '../../lib/ids';
import { notify } from '../../lib/notices';
import { buildSchemaPayload, initialSchemaState } from '../../lib/schemaForm';
import { useJobTypeForm } from '../../lib/useJobTypes';

/** The examples' type (the forms' default) and the payload its schema's defaults make. */
function useExampleSpec(): { type: string; payload: Record<string, unknown> } | null {
  const { type, plan } = useJobTypeForm('');
  if (!type || !plan) return null;
  return { type, payload: buildSchemaPayload(plan, initialSchemaState(plan), {}) };
}

export function BatchForm() {
  const [format, setFormat] = useState<'json' | 'csv'>('json');
  const [text, setText] = useState('');
  const [name, setName] = useState('');
  const [parseError, setParseError] = useState<string | null>(null);
  const [preview, setPreview] = useState<BatchCreate | null>(null);
  const [apiError, setApiError] = useState<{ message: string; details: readonly ErrorDetail[] } | null>(null);
  const [submitting, setSubmitting] = useState(false);
  const [batch, setBatch] = useState<{ id: string; name: string | null } | null>(null);
  const example = useExampleSpec();

  const parse = (): BatchCreate | null => {
    const result = format === 'json' ? parseBatchJson(text, name) : parseBatchCsv(text, name);
    if (!result.ok) {
      setParseError(result.error);
      setPreview(null);
      return null;
    }
    setParseError(null);
    setPreview(result.batch);
    return result.batch;
  };

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    setApiError(null);
    const body = parse();
    if (!body) return;
    setSubmitting(true);
    try {
      const accepted = await submitBatch(body, newIdempotencyKey());
      setBatch({ id: accepted.batchId, name: body.name ?? null });
      notify(`Batch of ${accepted.jobIds.length} jobs accepted`);
    } catch (error) {
      setApiError({
        message: errorMessage(error),
        details: isApiError(error) ? error.details : [],
      });
    } finally {
      setSubmitting(false);
    }
  };

  const errorId = 'batch-text-error';
  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label="Submit a batch" data-testid="batch-form">
      <p className="muted">
        Up to 10,000 job specs, all accepted or none. Inside a batch a spec may carry a{' '}
        <code>ref</code> and name others in <code>dependsOn</code> as <code>ref:&lt;label&gt;</code>.
      </p>
      <Field path="batchName" label="Batch name" hint="Optional, up to 200 characters">
        {(p) => <input {...p} value={name} maxLength={200} onChange={(e) => setName(e.target.value)} />}
      </Field>
      <fieldset>
        <legend>Format</legend>
        <div className="radio-row">
          <label>
            <input type="radio" name="batch-format" checked={format === 'json'} onChange={() => setFormat('json')} />
            JSON list
          </label>
          <label>
            <input type="radio" name="batch-format" checked={format === 'csv'} onChange={() => setFormat('csv')} />
            CSV
          </label>
        </div>
      </fieldset>
      <div className="field">
        <label htmlFor="batch-text">{format === 'json' ? 'Job specs (JSON)' : 'Job specs (CSV with a header row)'}</label>
        <span className="hint" id="batch-text-hint">
          {format === 'json'
            ? 'A list of specs like POST /api/jobs, or {"name", "jobs": [...]}.'
            : 'Columns: type, priority, payload (JSON) or payload.<field>, ref, dependsOn (separated by ;), delaySeconds, runAt, maxAttempts, timeoutSeconds, retryPolicy.'}
        </span>
        <textarea
          id="batch-text"
          rows={10}
          className="mono"
          value={text}
          onChange={(e) => {
            setText(e.target.value);
            setPreview(null);
          }}
          aria-invalid={Boolean(parseError)}
          aria-describedby={`batch-text-hint${parseError ? ` ${errorId}` : ''}`}
        />
        {parseError ? (
          <span id={errorId} className="field-error" data-testid="batch-parse-error">
            {parseError}
          </span>
        ) : null}
        <div className="toolbar">
          {example ? (
            <button
              type="button"
              className="link"
              onClick={() =>
                setText(
                  format === 'json'
                    ? batchJsonExample(example.type, example.payload)
                    : batchCsvExample(example.type, example.payload),
                )
              }
            >
              Insert an example
            </button>
          ) : null}
        </div>
      </div>
      {preview ? (
        <p role="status" data-testid="batch-preview">
          {preview.jobs.length} job spec{preview.jobs.length === 1 ? '' : 's'} ready to submit.
        </p>
      ) : null}
      {apiError ? (
        <div className="error-summary" role="alert" data-testid="batch-errors">
          <h2>The batch was not submitted</h2>
          <p style={{ margin: '0 0 0.5rem' }}>{apiError.message}</p>
          {apiError.details.length > 0 ? (
            <ul>
              {apiError.details.slice(0, 50).map((detail, i) => (
                <li key={`${detail.field}-${i}`}>
                  <code>{detail.field}</code>: {detail.message}
                </li>
              ))}
              {apiError.details.length > 50 ? <li>…and {apiError.details.length - 50} more</li> : null}
            </ul>
          ) : null}
        </div>
      ) : null}
      <div className="toolbar">
        <button type="button" onClick={() => parse()}>
          Check
        </button>
        <button type="submit" className="primary" disabled={submitting || !text.trim()}>
          {submitting ? 'Submitting…' : 'Submit batch'}
        </button>
      </div>
      {batch ? <BatchProgress batchId={batch.id} {...(batch.name ? { title: batch.name } : {})} /> : null}
    </form>
  );
}
