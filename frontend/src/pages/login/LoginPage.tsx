import { useState, type SyntheticEvent } from 'react';
import { useLocation } from 'react-router';
import { errorMessage, isApiError } from '../../api/client';
import { authStore, session } from '../../api/instance';
import { useAuth } from '../../auth/hooks';
import { InputField } from '../../components/Field';
import { Loading } from '../../components/states';
import { usePageTitle } from '../../lib/usePageTitle';
import { Link, Navigate } from '../../project/links';
import { useNavigate } from '../../project/navigation';
import { DemoAccounts } from './DemoAccounts';

function target(state: unknown): string {
  const from = (state as { from?: unknown } | null)?.from;
  return typeof from === 'string' && from.startsWith('/') && !from.startsWith('//') ? from : '/';
}

function tooManyAttempts(retryAfter: number | null): string {
  return retryAfter === null
    ? 'Too many attempts. Wait a minute and try again.'
    : `Too many attempts. Try again in ${retryAfter} second${retryAfter === 1 ? '' : 's'}.`;
}

export function LoginPage() {
  usePageTitle('Log in');
  const location = useLocation();
  const navigate = useNavigate();
  const loggedIn = useAuth((state) => state.session !== null);
  const restoring = useAuth((state) => state.restoring);
  const endedBecause = useAuth((state) => state.endedBecause);
  const registered = (location.state as { registered?: string } | null)?.registered;
  const [email, setEmail] = useState(registered ?? '');
  const [password, setPassword] = useState('');
  const [error, setError] = useState<string | null>(null);
  const [busy, setBusy] = useState(false);

  if (loggedIn) return <Navigate to={target(location.state)} replace />;
  if (restoring) {
    // a new tab or a reload asks the gateway for the session of its cookie first
    return (
      <main id="main" className="auth-page">
        <Loading label="Opening your session…" />
      </main>
    );
  }

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    setError(null);
    if (!email.trim() || !password) {
      setError('Enter your email and password.');
      return;
    }
    setBusy(true);
    try {
      const tokens = await session.logIn(email.trim(), password);
      authStore.getState().login(tokens);
      navigate(target(location.state), { replace: true });
    } catch (err) {
      if (isApiError(err) && err.status === 401) setError('Wrong email or password.');
      else if (isApiError(err) && err.status === 429) setError(tooManyAttempts(err.retryAfter));
      else setError(errorMessage(err));
    } finally {
      setBusy(false);
    }
  };

  return (
    <main id="main" className="auth-page">
      <div className="card">
        <h1>Log in</h1>
        {endedBecause === 'expired' ? (
          <p role="status" className="muted">
            Your session ended. Please log in again.
          </p>
        ) : null}
        {registered ? (
          <p role="status" className="ok-text">
            Registration received. Log in with your email and password.
          </p>
        ) : null}
        {error ? (
          <div className="error-summary" role="alert" data-testid="login-error">
            {error}
          </div>
        ) : null}
        <form onSubmit={submit} noValidate aria-label="Log in">
          <InputField path="email" label="Email" type="email" autoComplete="username" value={email} onChange={setEmail} required />
          <InputField
            path="password"
            label="Password"
            type="password"
            autoComplete="current-password"
            value={password}
            onChange={setPassword}
            required
          />
          <button type="submit" className="primary" disabled={busy}>
            {busy ? 'Logging in…' : 'Log in'}
          </button>
        </form>
        <p>
          No account yet? <Link to="/register">Register</Link>
        </p>
        <DemoAccounts
          onPick={(pickedEmail, pickedPassword) => {
            setEmail(pickedEmail);
            setPassword(pickedPassword);
          }}
        />
      </div>
    </main>
  );
}
