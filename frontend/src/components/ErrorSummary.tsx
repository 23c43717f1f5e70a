import { useEffect, useRef } from 'react';
import { fieldId } from '../lib/fieldId';

interface Props {
  errors: Record<string, string>;
  /** Field paths that exist in the form; others are listed without a link. */
  known?: ReadonlySet<string>;
  title?: string;
  message?: string | null;
  /** Changes whenever a new submission failed, to move focus to the summary again. */
  focusKey?: number;
  labels?: Record<string, string>;
}

/** The list of problems at the top of a form, each linking to its field. */
export function ErrorSummary({ errors, known, title, message, focusKey, labels }: Props) {
  const ref = useRef<HTMLDivElement>(null);
  const entries = Object.entries(errors);
  useEffect(() => {
    if (focusKey) ref.current?.focus();
  }, [focusKey]);
  if (entries.length === 0 && !message) return null;
  return (
    <div
      className="error-summary"
      role="alert"
      tabIndex={-1}
      ref={ref}
      data-testid="error-summary"
    >
      <h2>{title ?? 'Please fix the following'}</h2>
      {message ? <p style={{ margin: '0 0 0.5rem' }}>{message}</p> : null}
      {entries.length > 0 ? (
        <ul>
          {entries.map(([field, text]) => (
            <li key={field}>
              {!known || known.has(field) ? (
                <a href={`#${fieldId(field)}`}>
                  {labels?.[field] ?? field}: {text}
                </a>
              ) : (
                <span>
                  {labels?.[field] ?? field}: {text}
                </span>
              )}
            </li>
          ))}
        </ul>
      ) : null}
    </div>
  );
}
