import type { ReactNode } from 'react';
import { ProjectAccessContext } from './access';
import { useLoadedAccess } from './directory';

/** Provides the user's projects, roles and the project chosen to the pages under it. */
export function ProjectProvider({ children }: { children: ReactNode }) {
  const access = useLoadedAccess();
  return <ProjectAccessContext.Provider value={access}>{children}</ProjectAccessContext.Provider>;
}
