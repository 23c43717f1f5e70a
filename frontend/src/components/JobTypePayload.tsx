import type { FieldErrors } from '../lib/jobForm';
import type { JobTemplateForm } from '../lib/useJobTemplateForm';
import { JobPayloadFieldset } from './JobPayloadFieldset';
import { JobTypeInfo, JobTypesError } from './JobTypeChoice';

interface Props {
  form: Pick<JobTemplateForm, 'values' | 'setPayload' | 'jobTypes' | 'selected' | 'plan' | 'payload'>;
  errors: FieldErrors;
  /** API path prefix of the payload: `payload` or `jobTemplate.payload`. */
  prefix?: string;
}

/**
 * Under the type select of a form that makes jobs: what the platform says of the chosen type,
 * the type list's error, then the type's payload inputs (`JobPayloadFieldset`).
 */
export function JobTypePayload({ form, errors, prefix }: Props) {
  const { values, setPayload, jobTypes, selected, plan, payload } = form;
  return (
    <>
      {selected ? <JobTypeInfo info={selected} /> : null}
      {jobTypes.isError ? <JobTypesError error={jobTypes.error} onRetry={() => void jobTypes.refetch()} /> : null}
      <JobPayloadFieldset
        type={values.type}
        plan={plan}
        state={payload}
        onStateChange={setPayload}
        errors={errors}
        prefix={prefix}
        loading={jobTypes.isPending}
      />
    </>
  );
}
