import { useLocation } from 'react-router';
import { shortId } from '../lib/format';
import { ROLE_LABELS } from '../lib/tenancy';
import { useProjectAccess } from './access';
import { useNavigate } from './navigation';
import { switchTarget } from './url';

/**
 * The project every page follows: "All projects", then each project the user sees, grouped by
 * organization. The choice goes into the URL (`?project=<id>`); the page stays, from the first
 * page of its listing.
 */
export function ProjectSwitcher() {
  const access = useProjectAccess();
  const navigate = useNavigate();
  const location = useLocation();
  if (!access) return null;
  const { projectId, directory, chosen } = access;
  const listed = projectId ? directory.entries.has(projectId) : true;
  const role = chosen ? (chosen.role ? ROLE_LABELS[chosen.role] : access.platformAdmin ? 'platform admin' : null) : null;
  return (
    <div className="project-bar" data-testid="project-switcher">
      <label htmlFor="project-switcher">Project</label>
      <select
        id="project-switcher"
        value={projectId ?? ''}
        aria-describedby={role ? 'project-role' : undefined}
        onChange={(event) => {
          const next = event.target.value || null;
          navigate(switchTarget(location, next), { project: next });
        }}
      >
        <option value="">All projects</option>
        {projectId && !listed ? (
          <option value={projectId}>
            {chosen
              ? chosen.project.name
              : access.state === 'loading'
                ? 'Loading…'
                : `Unknown project ${shortId(projectId)}`}
          </option>
        ) : null}
        {directory.groups.map((group) => (
          <optgroup key={group.orgId} label={group.name}>
            {group.entries.map((entry) => (
              <option key={entry.project.id} value={entry.project.id}>
                {entry.project.name}
              </option>
            ))}
          </optgroup>
        ))}
      </select>
      {role ? (
        <span id="project-role" className="project-role" data-testid="project-role">
          Your role: {role}
        </span>
      ) : null}
      {directory.truncated ? <span className="project-role">(the first {directory.entries.size} projects)</span> : null}
    </div>
  );
}
