import { fieldId } from '../lib/fieldId';
import type { InputHTMLAttributes, ReactElement, ReactNode } from 'react';


export interface ControlProps {
  id: string;
  name: string;
  'aria-invalid': boolean;
  'aria-describedby'?: string;
  'aria-required'?: boolean;
}

interface Props {
  /** The API field path, e.g. `payload.to`: drives the id and error lookup. */
  path: string;
  label: ReactNode;
  hint?: ReactNode;
  error?: string | undefined;
  children: (props: ControlProps) => ReactElement;
  className?: string;
  /** Marks the label with an asterisk (hidden from screen readers) and the control `aria-required`. */
  required?: boolean;
}

/** A labelled control with its hint and inline error (described-by both). */
export function Field({ path, label, hint, error, children, className, required }: Props) {
  const id = fieldId(path);
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field ${className ?? ''}`}>
      <label htmlFor={id}>
        {label}
        {required ? (
          <span className="required-mark" aria-hidden="true">
            {' '}
            *
          </span>
        ) : null}
      </label>
      {hint ? (
        <span id={hintId} className="hint">
          {hint}
        </span>
      ) : null}
      {children({
        id,
        name: path,
        'aria-invalid': Boolean(error),
        ...(describedBy ? { 'aria-describedby': describedBy } : {}),
        ...(required ? { 'aria-required': true } : {}),
      })}
      {error ? (
        <span id={errorId} className="field-error" data-testid={`error-${path}`}>
          {error}
        </span>
      ) : null}
    </div>
  );
}

export function FieldErrorText({ path, error }: { path: string; error?: string | undefined }) {
  if (!error) return null;
  return (
    <span id={`${fieldId(path)}-error`} className="field-error" data-testid={`error-${path}`}>
      {error}
    </span>
  );
}

type InputProps = Omit<InputHTMLAttributes<HTMLInputElement>, 'value' | 'onChange' | 'id' | 'name' | 'children'>;

/**
 * A `Field` whose control is an `<input>` of a text value; `type`, `required` and the other
 * input attributes go to the input.
 */
export function InputField({
  path,
  label,
  hint,
  error,
  value,
  onChange,
  ...input
}: Pick<Props, 'path' | 'label' | 'hint' | 'error'> & InputProps & { value: string; onChange: (value: string) => void }) {
  return (
    <Field path={path} label={label} hint={hint} error={error}>
      {(props) => <input {...props} {...input} value={value} onChange={(e) => onChange(e.target.value)} />}
    </Field>
  );
}
