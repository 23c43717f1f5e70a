import { useState, type SyntheticEvent } from 'react';
import { errorMessage, isApiError } from '../../api/client';
import { register } from '../../api/endpoints';
import { ErrorSummary } from '../../components/ErrorSummary';
import { InputField } from '../../components/Field';
import { isEmail } from '../../lib/jobForm';
import { usePageTitle } from '../../lib/usePageTitle';
import { Link } from '../../project/links';
import { useNavigate } from '../../project/navigation';

/** The attributes of an input that sets a new password. */
const NEW_PASSWORD = { type: 'password', autoComplete: 'new-password' } as const;

function tooManyRegistrations(retryAfter: number | null): string {
  const minutes = retryAfter === null ? null : Math.max(1, Math.ceil(retryAfter / 60));
  return minutes === null
    ? 'Too many registrations from your network. Try again later.'
    : `Too many registrations from your network. Try again in ${minutes} minute${minutes === 1 ? '' : 's'}.`;
}

export function RegisterPage() {
  usePageTitle('Register');
  const navigate = useNavigate();
  const [email, setEmail] = useState('');
  const [password, setPassword] = useState('');
  const [confirm, setConfirm] = useState('');
  const [errors, setErrors] = useState<Record<string, string>>({});
  const [message, setMessage] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);
  const [attempt, setAttempt] = useState(0);

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (!isEmail(email)) found.email = 'Enter a valid email address';
    if (password.length < 8 || password.length > 128) found.password = 'Use 8 to 128 characters';
    if (confirm !== password) found.confirm = 'The passwords do not match';
    setErrors(found);
    setMessage(null);
    setAttempt((n) => n + 1);
    if (Object.keys(found).length > 0) return;
    setBusy(true);
    try {
      // The same answer whether the email was new or taken: the login page says what next.
      await register({ email: email.trim(), password });
      navigate('/login', { state: { registered: email.trim() } });
    } catch (err) {
      if (isApiError(err) && err.status === 429) {
        setMessage(tooManyRegistrations(err.retryAfter));
      } else if (isApiError(err) && err.details.length > 0) {
        setErrors(err.fieldErrors());
      } else {
        setMessage(errorMessage(err));
      }
      setAttempt((n) => n + 1);
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="auth-page">
      <div className="card">
        <h1>Register</h1>
        <ErrorSummary
          errors={errors}
          message={message}
          focusKey={attempt}
          labels={{ email: 'Email', password: 'Password', confirm: 'Repeat password' }}
        />
        <form onSubmit={submit} noValidate aria-label="Register">
          <InputField path="email" label="Email" error={errors.email} type="email" autoComplete="email" value={email} onChange={setEmail} />
          <InputField path="password" label="Password" hint="8 to 128 characters" error={errors.password} {...NEW_PASSWORD} value={password} onChange={setPassword} />
          <InputField path="confirm" label="Repeat password" error={errors.confirm} {...NEW_PASSWORD} value={confirm} onChange={setConfirm} />
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Creating account…' : 'Create account'}
          </button>
        </form>
        <p>
          Have an account? <Link to="/login">Log in</Link>
        </p>
      </div>
    </main>
  );
}
