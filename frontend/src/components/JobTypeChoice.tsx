import { errorMessage } from '../api/client';
import type { JobTypeInfo as TypeInfo } from '../api/types';
import type { ControlProps } from './Field';

function TypeOption({ info }: { info: TypeInfo }) {
  return (
    <option value={info.type}>
      {info.type}
      {info.liveWorkers === 0 ? ' (no live worker)' : ''}
    </option>
  );
}

/**
 * The job type select: the types the registry lists (`types`, `orderedTypes`), the built-in
 * ones (its `builtin` flag) in a group, the custom ones workers announced in another. A type
 * no worker announced is not offered; `value` is kept as an option of its own when the list
 * does not have it (the type list loading, or a type no longer listed).
 */
export function JobTypeSelect({
  value,
  onChange,
  types,
  loading,
  ...control
}: ControlProps & { value: string; onChange: (type: string) => void; types: readonly TypeInfo[]; loading: boolean }) {
  const builtin = types.filter((t) => t.builtin);
  const custom = types.filter((t) => !t.builtin);
  const listed = types.some((t) => t.type === value);
  return (
    <select {...control} value={value} onChange={(e) => onChange(e.target.value)}>
      {listed ? null : (
        <option value={value}>{value ? `${value} (not listed)` : loading ? 'Loading the job types…' : 'No job type is listed'}</option>
      )}
      {builtin.length > 0 ? (
        <optgroup label="Built-in">
          {builtin.map((t) => (
            <TypeOption key={t.type} info={t} />
          ))}
        </optgroup>
      ) : null}
      {custom.length > 0 ? (
        <optgroup label="Custom (announced by workers)">
          {custom.map((t) => (
            <TypeOption key={t.type} info={t} />
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

/** The type list could not be read: no type can be offered until it is. */
export function JobTypesError({ error, onRetry }: { error: unknown; onRetry: () => void }) {
  return (
    <p className="muted" data-testid="job-types-error">
      The job types could not be loaded: {errorMessage(error)}{' '}
      <button type="button" className="link" onClick={onRetry}>
        Try again
      </button>
    </p>
  );
}
