import { useState } from 'react';
import { listRetryPolicies } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';
import { useScopedQuery } from '../project/useScopedQuery';
import { customPayloadState, type FieldErrors, type PayloadValues, type TypedPayloadValues } from './jobForm';
import { foldPayloadErrors, type SchemaPayloadState } from './schemaForm';
import { useJobTypeForm } from './useJobTypes';

/**
 * The state of a form that makes jobs (the submit and the schedule form): its values, the type
 * list and the chosen type as listed (`useJobTypeForm`: a custom type's schema form is `plan`),
 * the custom type's payload inputs (`customState`) and the stored retry policies.
 */
export function useJobTemplateForm<V extends TypedPayloadValues>(initial: () => V) {
  const [values, setValues] = useState<V>(initial);
  const policies = useScopedQuery({
    queryKey: queryKeys.retryPolicies,
    queryFn: ({ signal }) => listRetryPolicies(signal),
    staleTime: 60_000,
  });
  // built-ins keep their hand-written fields; a custom type gets a form from its schema
  const { jobTypes, customTypes, selected, plan } = useJobTypeForm(values.type);
  const customState = plan ? customPayloadState(values, plan) : null;
  return {
    values,
    setValues,
    set: (patch: Partial<V>) => setValues((v) => ({ ...v, ...patch })),
    setPayload: (payload: PayloadValues) => setValues((v) => ({ ...v, payload })),
    setCustom: (state: SchemaPayloadState) => setValues((v) => ({ ...v, custom: { ...v.custom, [v.type]: state } })),
    /** The API's field errors, a custom type's payload errors folded onto its inputs (`foldPayloadErrors`). */
    foldErrors: (errors: FieldErrors, prefix?: string): FieldErrors =>
      plan && customState ? foldPayloadErrors(errors, plan, customState, prefix) : errors,
    policies,
    jobTypes,
    customTypes,
    selected,
    plan,
    customState,
  };
}

export type JobTemplateForm<V extends TypedPayloadValues = TypedPayloadValues> = ReturnType<typeof useJobTemplateForm<V>>;
