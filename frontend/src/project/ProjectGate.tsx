import type { ReactNode } from 'react';
import { useLocation } from 'react-router';
import { errorMessage } from '../api/client';
import { Loading } from '../components/states';
import { usePageTitle } from '../lib/usePageTitle';
import { useProjectAccess } from './access';
import { Link } from './links';
import { switchTarget } from './url';

function ProjectNotFound({ projectId }: { projectId: string }) {
  usePageTitle('Project not found');
  const location = useLocation();
  return (
    <>
      <h1>Project not found</h1>
      <div className="card card-warn" role="alert" data-testid="project-not-found">
        <p style={{ marginTop: 0 }}>
          No project <code>{projectId}</code> is visible to you. It may have been deleted, you may no longer be a member
          of its organization, or the link may be mistyped.
        </p>
        <p style={{ marginBottom: 0 }}>
          <Link to={switchTarget(location, null)} project={null} data-testid="show-all-projects">
            Show all projects
          </Link>{' '}
          or choose another project above.
        </p>
      </div>
    </>
  );
}

/**
 * The pages, once the user's projects and roles are known (the controls a role may not use are
 * hidden from the first paint); instead of them, when the URL names a project the user does not
 * see, a message with the way back to all projects.
 */
export function ProjectGate({ children }: { children: ReactNode }) {
  const access = useProjectAccess();
  if (!access) return <>{children}</>;
  if (access.state === 'loading') return <Loading label="Loading your projects…" />;
  if (access.state === 'missing' && access.projectId) return <ProjectNotFound projectId={access.projectId} />;
  if (access.state === 'error') {
    return (
      <>
        <div className="state state-error" role="alert" data-testid="projects-unreadable">
          <strong>Could not read your projects.</strong> {errorMessage(access.error)} Every control is shown; the API
          still refuses what your role does not allow.
        </div>
        {children}
      </>
    );
  }
  return <>{children}</>;
}
