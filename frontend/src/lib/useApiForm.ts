import { useState } from 'react';
import { errorMessage } from '../api/client';
import { formMessage, prefixedFieldErrors } from './tenancy';

/**
 * The state of a small form that sends one API request: its field errors (the client's, then
 * the API's details under `prefix`), the API's message, the attempt counter that moves focus
 * to the error summary, and whether it is sending.
 */
export function useApiForm(prefix: string) {
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const [attempt, setAttempt] = useState(0);
  const [busy, setBusy] = useState(false);

  /** Shows `found` (client-side errors) or, when there is none, runs `action`; true when it succeeded. */
  const run = async (found: Record<string, string>, action: () => Promise<void>): Promise<boolean> => {
    setMessage(null);
    setErrors(found);
    if (Object.keys(found).length > 0) {
      setAttempt((n) => n + 1);
      return false;
    }
    setBusy(true);
    try {
      await action();
      return true;
    } catch (error) {
      setErrors(prefixedFieldErrors(error, prefix));
      setMessage(formMessage(error, errorMessage));
      setAttempt((n) => n + 1);
      return false;
    } finally {
      setBusy(false);
    }
  };

  const reset = () => {
    setErrors({});
    setMessage(null);
  };

  return { errors, message, attempt, busy, run, reset };
}
