import type { ReactNode } from 'react';
import { useLocation } from 'react-router';
import { Navigate } from '../project/links';
import { useAuth } from './hooks';

/**
 * Protected routes: without a session, go to /login and come back afterwards (unless the
 * user logged out on purpose: then the next login starts at the overview).
 */
export function RequireAuth({ children }: { children: ReactNode }) {
  const loggedIn = useAuth((state) => state.session !== null);
  const endedBecause = useAuth((state) => state.endedBecause);
  const location = useLocation();
  if (!loggedIn) {
    const from = `${location.pathname}${location.search}${location.hash}`;
    // `from` keeps the project chosen (`?project=`): after the login the same project opens
    return <Navigate to="/login" project={null} replace state={endedBecause === 'user' ? null : { from }} />;
  }
  return <>{children}</>;
}
