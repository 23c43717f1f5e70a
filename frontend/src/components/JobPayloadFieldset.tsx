import { fieldId } from '../lib/fieldId';
import type { FieldErrors } from '../lib/jobForm';
import type { SchemaFormPlan } from '../lib/schemaFields';
import type { SchemaPayloadState } from '../lib/schemaForm';
import { SchemaPayloadFields } from './SchemaPayloadFields';

interface Props {
  type: string;
  /** The form of the type's payload schema and its inputs (null while the type is not listed). */
  plan: SchemaFormPlan | null;
  state: SchemaPayloadState | null;
  onStateChange: (state: SchemaPayloadState) => void;
  errors: FieldErrors;
  /** API path prefix of the payload: `payload` or `jobTemplate.payload`. */
  prefix?: string;
  /** The type list is still loading (the type's schema is not known yet). */
  loading: boolean;
}

/**
 * The payload of a job of `type`, as the submit and the schedule form ask for it: the fields
 * built from the type's schema as the registry lists it (SchemaPayloadFields), built-in or
 * custom alike, and the errors reported on the payload as a whole.
 */
export function JobPayloadFieldset({ type, plan, state, onStateChange, errors, prefix = 'payload', loading }: Props) {
  // in raw JSON the text area is the payload's control (field-<prefix>)
  const raw = plan !== null && (plan.kind === 'raw' || state?.rawMode === true);
  return (
    <fieldset id={raw ? undefined : fieldId(prefix)} tabIndex={raw ? undefined : -1}>
      <legend>Payload{type ? `: ${type}` : ''}</legend>
      {plan && state ? (
        <SchemaPayloadFields key={type} plan={plan} state={state} onChange={onStateChange} errors={errors} prefix={prefix} />
      ) : (
        <p className="muted">
          {loading ? 'Loading the job types…' : type ? 'This type is not known: choose another.' : 'Choose a job type.'}
        </p>
      )}
      {errors[prefix] && !raw ? (
        <span className="field-error" data-testid={`error-${prefix}`}>
          {errors[prefix]}
        </span>
      ) : null}
    </fieldset>
  );
}
