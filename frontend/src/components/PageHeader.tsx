import type { ReactNode } from 'react';
import { Link } from '../project/links';

/**
 * A page's heading with what stands beside it: the page's primary link (`link`) or other
 * controls (`children`).
 */
export function PageHeader({
  title,
  link,
  children,
}: {
  title: ReactNode;
  link?: { to: string; label: string };
  children?: ReactNode;
}) {
  return (
    <div className="page-header">
      <h1>{title}</h1>
      {link ? (
        <Link to={link.to} className="button primary">
          {link.label}
        </Link>
      ) : null}
      {children}
    </div>
  );
}
