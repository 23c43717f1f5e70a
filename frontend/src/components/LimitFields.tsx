import type { FieldErrors } from '../lib/jobForm';
import { InputField } from './Field';

type Limit = 'maxAttempts' | 'timeoutSeconds';
type Limits = Record<Limit, string>;

const LIMITS: readonly (readonly [Limit, string])[] = [
  ['maxAttempts', 'Max attempts'],
  ['timeoutSeconds', 'Timeout (seconds)'],
];

interface Props {
  values: Limits;
  onChange: (patch: Partial<Limits>) => void;
  errors: FieldErrors;
  /** What each field's hint says (its bounds, what empty means). */
  hints: Limits;
  /** API path prefix of the fields: none for a job, `jobTemplate` for a schedule's. */
  prefix?: string;
}

/** A job's `Max attempts` and `Timeout (seconds)` (the submit and the schedule form). */
export function LimitFields({ values, onChange, errors, hints, prefix }: Props) {
  return (
    <>
      {LIMITS.map(([name, label]) => {
        const path = prefix ? `${prefix}.${name}` : name;
        const change = (value: string) => {
          const patch: Partial<Limits> = {};
          patch[name] = value;
          onChange(patch);
        };
        return (
          <InputField key={name} path={path} label={label} hint={hints[name]} error={errors[path]} inputMode="numeric" value={values[name]} onChange={change} />
        );
      })}
    </>
  );
}
