import { errorMessage } from '../api/client';
import { JOB_TYPES, type JobTypeInfo as TypeInfo } from '../api/types';
import { TYPE_LABELS } from '../lib/jobTypes';
import type { ControlProps } from './Field';

/** The job type select: the built-ins, then the custom types workers announced. */
export function JobTypeSelect({
  value,
  onChange,
  customTypes,
  ...control
}: ControlProps & { value: string; onChange: (type: string) => void; customTypes: readonly TypeInfo[] }) {
  return (
    <select {...control} value={value} onChange={(e) => onChange(e.target.value)}>
      <optgroup label="Built-in">
        {JOB_TYPES.map((type) => (
          <option key={type} value={type}>
            {TYPE_LABELS[type]}
          </option>
        ))}
      </optgroup>
      {customTypes.length > 0 ? (
        <optgroup label="Custom (announced by workers)">
          {customTypes.map((t) => (
            <option key={t.type} value={t.type}>
              {t.type}
              {t.liveWorkers === 0 ? ' (no live worker)' : ''}
            </option>
          ))}
        </optgroup>
      ) : null}
    </select>
  );
}

/** What the platform says of the chosen type: built-in or custom, its queue, live workers. */
export function JobTypeInfo({ info }: { info: TypeInfo }) {
  const workers = info.liveWorkers;
  return (
    <p className="muted" data-testid="job-type-info" data-live-workers={workers}>
      {info.builtin ? 'Built-in type' : 'Custom type, announced by workers'} · queue{' '}
      <span className="mono">{info.queue}</span> ·{' '}
      {workers === 0 ? (
        <strong className="warn-text">no live worker serves it right now: its jobs wait in the queue until one starts</strong>
      ) : (
        `${workers} live worker${workers === 1 ? '' : 's'}`
      )}
    </p>
  );
}

/** The type list could not be read: the built-ins are still offered. */
export function JobTypesError({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  return (
    <p className="muted" data-testid="job-types-error">
      Custom job types could not be loaded: {errorMessage(error)}{' '}
      <button type="button" className="link" onClick={onRetry}>
        Try again
      </button>
    </p>
  );
}
