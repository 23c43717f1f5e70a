import { shortId } from '../lib/format';
import { useProjectAccess } from './access';

/** A project by its name and organization's ("Web · Acme Corp"), else by the start of its id. */
export function ProjectName({ projectId }: { projectId: string }) {
  const entry = useProjectAccess()?.directory.entries.get(projectId);
  if (!entry) return <span className="mono">{shortId(projectId)}</span>;
  return (
    <>
      {entry.project.name}
      {entry.org ? <span className="muted"> · {entry.org.name}</span> : null}
    </>
  );
}
