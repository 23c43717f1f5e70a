import { isBuiltinType } from '../api/types';
import { fieldId } from '../lib/fieldId';
import type { FieldErrors, PayloadValues } from '../lib/jobForm';
import { typeLabel } from '../lib/jobTypes';
import type { SchemaFormPlan } from '../lib/schemaFields';
import type { SchemaPayloadState } from '../lib/schemaForm';
import { PayloadFields } from './PayloadFields';
import { SchemaPayloadFields } from './SchemaPayloadFields';

interface Props {
  type: string;
  /** The built-ins' inputs. */
  payload: PayloadValues;
  onPayloadChange: (payload: PayloadValues) => void;
  /** A custom type: the form of its schema and its inputs (null for a built-in or an unknown type). */
  plan: SchemaFormPlan | null;
  state: SchemaPayloadState | null;
  onStateChange: (state: SchemaPayloadState) => void;
  errors: FieldErrors;
  /** API path prefix of the payload: `payload` or `jobTemplate.payload`. */
  prefix?: string;
  /** The type list is still loading (a custom type's schema is not known yet). */
  loading: boolean;
}

/**
 * The payload of a job of `type`, as the submit and the schedule form ask for it: a built-in
 * type's hand-written fields (PayloadFields), a custom type's fields built from its schema
 * (SchemaPayloadFields), and the errors reported on the payload as a whole.
 */
export function JobPayloadFieldset({
  type,
  payload,
  onPayloadChange,
  plan,
  state,
  onStateChange,
  errors,
  prefix = 'payload',
  loading,
}: Props) {
  // in raw JSON the text area is the payload's control (field-<prefix>)
  const raw = !isBuiltinType(type) && plan !== null && (plan.kind === 'raw' || state?.rawMode === true);
  return (
    <fieldset id={raw ? undefined : fieldId(prefix)} tabIndex={raw ? undefined : -1}>
      <legend>Payload: {typeLabel(type)}</legend>
      {isBuiltinType(type) ? (
        <PayloadFields type={type} values={payload} onChange={onPayloadChange} errors={errors} prefix={prefix} />
      ) : plan && state ? (
        <SchemaPayloadFields key={type} plan={plan} state={state} onChange={onStateChange} errors={errors} prefix={prefix} />
      ) : (
        <p className="muted">{loading ? 'Loading the type’s schema…' : 'This type is not known: choose another.'}</p>
      )}
      {errors[prefix] && !raw ? (
        <span className="field-error" data-testid={`error-${prefix}`}>
          {errors[prefix]}
        </span>
      ) : null}
    </fieldset>
  );
}
