import { useQueryClient } from '@tanstack/react-query';
import { Suspense, useEffect, useRef, useState } from 'react';
import { Outlet, useLocation } from 'react-router';
import { authStore } from '../api/instance';
import { useAuth } from '../auth/hooks';
import { NavLink } from '../project/links';
import { useNavigate } from '../project/navigation';
import { ProjectGate } from '../project/ProjectGate';
import { ProjectProvider } from '../project/ProjectProvider';
import { ProjectSwitcher } from '../project/ProjectSwitcher';
import { LiveIndicator } from './LiveIndicator';
import { Loading } from './states';
import { Notices } from './Notices';

const LINKS = [
  { to: '/', label: 'Overview', end: true },
  { to: '/submit', label: 'Submit' },
  { to: '/jobs', label: 'Jobs' },
  { to: '/dead-letters', label: 'Dead letters' },
  { to: '/schedules', label: 'Schedules' },
  { to: '/queues', label: 'Queues' },
  { to: '/batches', label: 'Batches' },
  { to: '/workers', label: 'Workers' },
  { to: '/organizations', label: 'Organizations' },
];

export function Layout() {
  const user = useAuth((state) => state.session?.user);
  const client = useQueryClient();
  const navigate = useNavigate();
  const location = useLocation();
  const [menuOpen, setMenuOpen] = useState(false);
  const mainRef = useRef<HTMLElement>(null);
  const firstRender = useRef(true);

  useEffect(() => {
    // a route change moves focus to the content, like a page load would
    if (firstRender.current) {
      firstRender.current = false;
      return;
    }
    mainRef.current?.focus();
  }, [location.pathname]);

  const logout = () => {
    authStore.getState().logout('user');
    client.clear();
    navigate('/login', { replace: true, project: null });
  };

  return (
    <ProjectProvider>
      <a className="skip-link" href="#main">
        Skip to content
      </a>
      <header className="app-header">
        <NavLink to="/" className="brand" end>
          Jobs
        </NavLink>
        <button
          type="button"
          className="nav-toggle"
          aria-expanded={menuOpen}
          aria-controls="main-nav"
          onClick={() => setMenuOpen((open) => !open)}
        >
          <span aria-hidden="true">{menuOpen ? '✕' : '☰'}</span>
          Menu
        </button>
        <nav id="main-nav" className="main-nav" aria-label="Main" data-open={menuOpen}>
          <ul>
            {LINKS.map((link) => (
              <li key={link.to}>
                <NavLink to={link.to} end={link.end ?? false} onClick={() => setMenuOpen(false)}>
                  {link.label}
                </NavLink>
              </li>
            ))}
          </ul>
        </nav>
        <div className="header-end">
          <LiveIndicator />
          {user ? (
            <span className="user-info" data-testid="current-user">
              {user.email} <span className="muted-inverse">({user.role})</span>
            </span>
          ) : null}
          <button type="button" onClick={logout}>
            Log out
          </button>
        </div>
        <ProjectSwitcher />
      </header>
      <main id="main" ref={mainRef} tabIndex={-1}>
        <ProjectGate>
          <Suspense fallback={<Loading />}>
            <Outlet />
          </Suspense>
        </ProjectGate>
      </main>
      <Notices />
    </ProjectProvider>
  );
}
