import { useQueryClient } from '@tanstack/react-query';
import { useEffect, type ReactNode } from 'react';
import { useLocation } from 'react-router';
import { Loading } from '../components/states';
import { Navigate } from '../project/links';
import { useAuth } from './hooks';

/**
 * Protected routes: without a session, go to /login and come back afterwards (unless the
 * user logged out on purpose: then the next login starts at the overview). While a new tab or
 * a reload asks the gateway for the session of its cookie, wait for the answer. A session that
 * ended (here or in another tab) leaves nothing of its data in the query cache.
 */
export function RequireAuth({ children }: { children: ReactNode }) {
  const loggedIn = useAuth((state) => state.session !== null);
  const restoring = useAuth((state) => state.restoring);
  const endedBecause = useAuth((state) => state.endedBecause);
  const location = useLocation();
  const client = useQueryClient();
  const ended = !loggedIn && !restoring;
  useEffect(() => {
    if (ended) client.clear();
  }, [client, ended]);
  if (restoring) {
    return (
      <main id="main">
        <Loading label="Opening your session…" />
      </main>
    );
  }
  if (!loggedIn) {
    const from = `${location.pathname}${location.search}${location.hash}`;
    // `from` keeps the project chosen (`?project=`): after the login the same project opens
    return <Navigate to="/login" project={null} replace state={endedBecause === 'user' ? null : { from }} />;
  }
  return <>{children}</>;
}
