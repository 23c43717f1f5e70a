/** Every in-app link and navigation keeps the project chosen (`?project=`). */
import { screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useLocation } from 'react-router';
import { describe, expect, it } from 'vitest';
import { JobLink } from '../components/JobLink';
import { PageHeader } from '../components/PageHeader';
import { renderWithProviders } from '../test/utils';
import { Link, Navigate, NavLink } from './links';
import { useNavigate, useProjectId, useSearchParams } from './navigation';

const href = (name: string) => screen.getByRole('link', { name }).getAttribute('href');
const location = () => screen.getByTestId('location').textContent;

function Controls() {
  const navigate = useNavigate();
  const [search, setSearch] = useSearchParams();
  return (
    <>
      <output data-testid="project">{useProjectId() ?? 'all'}</output>
      <button type="button" onClick={() => navigate('/dead-letters?tab=audit')}>
        navigate
      </button>
      <button type="button" onClick={() => navigate('/jobs', { project: null })}>
        navigate to all
      </button>
      <button type="button" onClick={() => setSearch({ status: 'dead', page: String(Number(search.get('page') ?? 1) + 1) })}>
        set search
      </button>
      <button type="button" onClick={() => setSearch((previous) => ({ ...Object.fromEntries(previous), project: 'p2' }))}>
        switch by search
      </button>
    </>
  );
}

describe('links and navigations keep the project', () => {
  it('on the shared links (jobs, page headers, the nav) and any Link; project={null} leaves it', () => {
    renderWithProviders(
      <>
        <JobLink jobId="aaaaaaaa-0000-4000-8000-000000000001" label="the job" />
        <PageHeader title="Jobs" link={{ to: '/submit', label: 'Submit a job' }} />
        <NavLink to="/workers">Workers</NavLink>
        <Link to="/dead-letters?tab=letters#top">Letters</Link>
        <Link to="/jobs?project=p2">Other project</Link>
        <Link to="/jobs" project={null}>
          All projects
        </Link>
      </>,
      { route: '/jobs?status=dead&project=p1' },
    );
    expect(href('the job')).toBe('/jobs/aaaaaaaa-0000-4000-8000-000000000001?project=p1');
    expect(href('Submit a job')).toBe('/submit?project=p1');
    expect(href('Workers')).toBe('/workers?project=p1');
    expect(href('Letters')).toBe('/dead-letters?tab=letters&project=p1#top');
    expect(href('Other project')).toBe('/jobs?project=p2');
    expect(href('All projects')).toBe('/jobs');
  });

  it('adds nothing while all projects are chosen', () => {
    renderWithProviders(<JobLink jobId="aaaaaaaa-0000-4000-8000-000000000001" label="the job" />, { route: '/jobs' });
    expect(href('the job')).toBe('/jobs/aaaaaaaa-0000-4000-8000-000000000001');
  });

  it('on navigations and search changes', async () => {
    const user = userEvent.setup();
    renderWithProviders(<Controls />, { route: '/jobs?project=p1' });
    await user.click(screen.getByRole('button', { name: 'set search' }));
    expect(location()).toBe('/jobs?status=dead&page=2&project=p1');
    await user.click(screen.getByRole('button', { name: 'switch by search' }));
    expect(location()).toBe('/jobs?status=dead&page=2&project=p2');
    await user.click(screen.getByRole('button', { name: 'navigate' }));
    expect(location()).toBe('/dead-letters?tab=audit&project=p2');
    expect(screen.getByTestId('project')).toHaveTextContent('p2');
    await user.click(screen.getByRole('button', { name: 'navigate to all' }));
    expect(location()).toBe('/jobs');
    expect(screen.getByTestId('project')).toHaveTextContent('all');
  });

  it('on a redirect', () => {
    function Redirect() {
      return useLocation().pathname === '/old' ? <Navigate to="/jobs" replace /> : null;
    }
    renderWithProviders(<Redirect />, { route: '/old?project=p1' });
    expect(location()).toBe('/jobs?project=p1');
  });
});
