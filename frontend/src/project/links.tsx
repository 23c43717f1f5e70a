/**
 * The router's links, keeping the chosen project (`?project=`, ./url.ts): pages import `Link`,
 * `NavLink` and `Navigate` from here, never from react-router (ESLint refuses it). A link that
 * names a project itself keeps it; `project={null}` links to all projects.
 */
import {
  Link as RouterLink,
  Navigate as RouterNavigate,
  NavLink as RouterNavLink,
  type LinkProps,
  type NavigateProps,
  type NavLinkProps,
} from 'react-router';
import { useProjectId } from './navigation';
import { keepProject } from './url';

interface ProjectProp {
  /** The project of the target (null: all projects); default: the one chosen now. */
  project?: string | null;
}

function useTarget(project: string | null | undefined) {
  const current = useProjectId();
  return project === undefined ? current : project;
}

export function Link({ to, project, ...rest }: LinkProps & ProjectProp) {
  const target = useTarget(project);
  return <RouterLink to={keepProject(to, target)} {...rest} />;
}

export function NavLink({ to, project, ...rest }: NavLinkProps & ProjectProp) {
  const target = useTarget(project);
  return <RouterNavLink to={keepProject(to, target)} {...rest} />;
}

export function Navigate({ to, project, ...rest }: NavigateProps & ProjectProp) {
  const target = useTarget(project);
  return <RouterNavigate to={keepProject(to, target)} {...rest} />;
}
