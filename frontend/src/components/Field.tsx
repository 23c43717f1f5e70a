import { fieldId } from '../lib/fieldId';
import type { ReactElement, ReactNode } from 'react';


export interface ControlProps {
  id: string;
  name: string;
  'aria-invalid': boolean;
  'aria-describedby'?: string;
}

interface Props {
  /** The API field path, e.g. `payload.to`: drives the id and error lookup. */
  path: string;
  label: ReactNode;
  hint?: ReactNode;
  error?: string | undefined;
  children: (props: ControlProps) => ReactElement;
  className?: string;
}

/** A labelled control with its hint and inline error (described-by both). */
export function Field({ path, label, hint, error, children, className }: Props) {
  const id = fieldId(path);
  const hintId = hint ? `${id}-hint` : undefined;
  const errorId = error ? `${id}-error` : undefined;
  const describedBy = [hintId, errorId].filter(Boolean).join(' ') || undefined;
  return (
    <div className={`field ${className ?? ''}`}>
      <label htmlFor={id}>{label}</label>
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
