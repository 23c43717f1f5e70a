import { useState, type ReactNode } from 'react';

interface Props {
  /** The first button's text, e.g. "Delete". */
  label: string;
  /** The confirming button's text, e.g. "Yes, delete". */
  confirmLabel: string;
  question: ReactNode;
  onConfirm: () => void;
  disabled?: boolean;
  busy?: boolean;
  danger?: boolean;
  testId?: string;
}

/** A destructive action in two steps, without a modal: click, then confirm inline. */
export function ConfirmAction({
  label,
  confirmLabel,
  question,
  onConfirm,
  disabled,
  busy,
  danger = true,
  testId,
}: Props) {
  const [asking, setAsking] = useState(false);
  if (!asking) {
    return (
      <button
        type="button"
        className={danger ? 'danger' : ''}
        onClick={() => setAsking(true)}
        disabled={disabled === true || busy === true}
        data-testid={testId}
      >
        {busy ? 'Working…' : label}
      </button>
    );
  }
  return (
    <span className="inline-confirm" role="group" aria-label={`Confirm: ${label}`}>
      <span>{question}</span>
      <button
        type="button"
        className={danger ? 'danger' : 'primary'}
        autoFocus
        onClick={() => {
          setAsking(false);
          onConfirm();
        }}
        data-testid={testId ? `${testId}-confirm` : undefined}
      >
        {confirmLabel}
      </button>
      <button type="button" onClick={() => setAsking(false)}>
        Keep
      </button>
    </span>
  );
}
