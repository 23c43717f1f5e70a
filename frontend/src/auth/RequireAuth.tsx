import type { ReactNode } from 'react';
import { Navigate, useLocation } from 'react-router';
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
    return <Navigate to="/login" replace state={endedBecause === 'user' ? null : { from }} />;
  }
  return <>{children}</>;
}
