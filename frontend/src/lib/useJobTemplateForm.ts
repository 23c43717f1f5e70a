import { useState } from 'react';
import { listRetryPolicies } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';
import { useScopedQuery } from '../project/useScopedQuery';
import { payloadState, type FieldErrors, type TypedPayloadValues } from './jobForm';
import { foldPayloadErrors, type SchemaPayloadState } from './schemaForm';
import { useJobTypeForm } from './useJobTypes';

/**
 * The state of a form that makes jobs (the submit and the schedule form): its values (with the
 * type the form shows: the one chosen, else the registry's default, `useJobTypeForm`), the type
 * list, the chosen type as listed with the form of its payload schema (`plan`), the payload's
 * inputs (`payload`) and the stored retry policies. Every type's form is built from its schema.
 */
export function useJobTemplateForm<V extends TypedPayloadValues>(initial: () => V) {
  const [chosen, setValues] = useState<V>(initial);
  const policies = useScopedQuery({
    queryKey: queryKeys.retryPolicies,
    queryFn: ({ signal }) => listRetryPolicies(signal),
    staleTime: 60_000,
  });
  const { jobTypes, types, type, selected, plan } = useJobTypeForm(chosen.type);
  const values: V = type === chosen.type ? chosen : { ...chosen, type };
  const payload = plan ? payloadState(values, plan) : null;
  return {
    values,
    setValues,
    set: (patch: Partial<V>) => setValues((v) => ({ ...v, type, ...patch })),
    setPayload: (state: SchemaPayloadState) =>
      setValues((v) => ({ ...v, type, payloads: { ...v.payloads, [type]: state } })),
    /** The API's field errors, the payload's folded onto its inputs (`foldPayloadErrors`). */
    foldErrors: (errors: FieldErrors, prefix?: string): FieldErrors =>
      plan && payload ? foldPayloadErrors(errors, plan, payload, prefix) : errors,
    policies,
    jobTypes,
    types,
    selected,
    plan,
    payload,
  };
}

export type JobTemplateForm<V extends TypedPayloadValues = TypedPayloadValues> = ReturnType<typeof useJobTemplateForm<V>>;
