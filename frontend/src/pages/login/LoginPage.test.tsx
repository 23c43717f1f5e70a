import { QueryClientProvider } from '@tanstack/react-query';
import { act, render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, beforeEach, describe, expect, it, vi, type MockInstance } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import { authStore, session } from '../../api/instance';
import { RequireAuth } from '../../auth/RequireAuth';
import { MemoryRouter, Route, Routes } from 'react-router';
import { fakeTokens, LocationProbe, seriousViolations, testQueryClient } from '../../test/utils';
import { LoginPage } from './LoginPage';

vi.mock('../../api/endpoints', () => ({ demoAccounts: vi.fn() }));
const demoAccounts = vi.mocked(endpoints.demoAccounts);

function renderApp(route: string, client = testQueryClient()) {
  return render(
    <QueryClientProvider client={client}>
      <MemoryRouter initialEntries={[route]}>
        <Routes>
          <Route path="/login" element={<LoginPage />} />
          <Route
            path="/jobs"
            element={
              <RequireAuth>
                <h1>Jobs page</h1>
              </RequireAuth>
            }
          />
        </Routes>
        <LocationProbe />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

describe('login', () => {
  let login: MockInstance<typeof session.logIn>;
  beforeEach(() => {
    login = vi.spyOn(session, 'logIn');
    demoAccounts.mockRejectedValue(new ApiError(404, 'not_found', 'no demo accounts outside development'));
  });
  afterEach(() => {
    act(() => authStore.getState().logout());
    demoAccounts.mockReset();
  });

  it('sends a protected route to /login and back there after logging in', async () => {
    const user = userEvent.setup();
    login.mockResolvedValue(fakeTokens({ email: 'user@test.com' }));
    const { container } = renderApp('/jobs?status=dead');
    expect(screen.getByTestId('location')).toHaveTextContent('/login');
    expect(await seriousViolations(container)).toEqual([]);
    await user.type(screen.getByLabelText('Email'), 'user@test.com');
    await user.type(screen.getByLabelText('Password'), 'user123');
    await user.click(screen.getByRole('button', { name: 'Log in' }));
    expect(await screen.findByRole('heading', { name: 'Jobs page' })).toBeInTheDocument();
    expect(screen.getByTestId('location')).toHaveTextContent('/jobs?status=dead');
    expect(login).toHaveBeenCalledWith('user@test.com', 'user123');
    expect(authStore.getState().session?.user.email).toBe('user@test.com');
    // the refresh token is the gateway's HttpOnly cookie: nothing of the session in storage
    expect(sessionStorage.length).toBe(0);
    expect(localStorage.length).toBe(1);
    expect(localStorage.getItem('jobs.session')).toBe('1');
  });

  it('a reload of a protected page waits for the session of the cookie instead of going to /login', async () => {
    act(() => authStore.setState({ restoring: true }));
    const { container } = renderApp('/jobs?status=dead');
    expect(screen.getByText('Opening your session…')).toBeInTheDocument();
    expect(screen.getByTestId('location')).toHaveTextContent('/jobs?status=dead');
    expect(await seriousViolations(container)).toEqual([]);
    act(() => authStore.getState().login(fakeTokens({ email: 'user@test.com' })));
    expect(await screen.findByRole('heading', { name: 'Jobs page' })).toBeInTheDocument();
    expect(login).not.toHaveBeenCalled();
  });

  it("another tab's logout sends this one to the login page and drops the data it read", async () => {
    const client = testQueryClient();
    client.setQueryData(['jobs', 'mine'], ['a job']);
    act(() => authStore.getState().login(fakeTokens({ email: 'user@test.com' })));
    renderApp('/jobs', client);
    expect(await screen.findByRole('heading', { name: 'Jobs page' })).toBeInTheDocument();
    const otherTab = new BroadcastChannel('jobs.session');
    try {
      otherTab.postMessage({ type: 'ended', reason: 'user' });
      expect(await screen.findByRole('heading', { name: 'Log in' })).toBeInTheDocument();
    } finally {
      otherTab.close();
    }
    expect(screen.getByTestId('location')).toHaveTextContent('/login');
    expect(client.getQueryData(['jobs', 'mine'])).toBeUndefined();
    expect(login).not.toHaveBeenCalled();
  });

  it('says when to try again after too many attempts', async () => {
    const user = userEvent.setup();
    login.mockRejectedValue(new ApiError(429, 'too_many_requests', 'too many login attempts', [], 42));
    renderApp('/login');
    await user.type(screen.getByLabelText('Email'), 'user@test.com');
    await user.type(screen.getByLabelText('Password'), 'user123');
    await user.click(screen.getByRole('button', { name: 'Log in' }));
    expect(await screen.findByTestId('login-error')).toHaveTextContent('Too many attempts. Try again in 42 seconds.');
  });

  it('says so when the password is wrong', async () => {
    const user = userEvent.setup();
    login.mockRejectedValue(new ApiError(401, 'unauthorized', 'invalid email or password'));
    renderApp('/login');
    await user.type(screen.getByLabelText('Email'), 'user@test.com');
    await user.type(screen.getByLabelText('Password'), 'nope');
    await user.click(screen.getByRole('button', { name: 'Log in' }));
    expect(await screen.findByTestId('login-error')).toHaveTextContent('Wrong email or password.');
    expect(authStore.getState().session).toBeNull();
  });

  it('lists the demo accounts of a development gateway, each filling the form in', async () => {
    const user = userEvent.setup();
    demoAccounts.mockResolvedValue({
      accounts: [
        { email: 'admin@test.com', password: 'admin123', description: 'platform admin: sees everything' },
        { email: 'viewer@example.com', password: 'password123', description: 'Carol Viewer: viewer of Acme Corp' },
      ],
    });
    const { container } = renderApp('/login');
    const section = await screen.findByRole('region', { name: 'Demo accounts (development only)' });
    expect(section).toHaveTextContent('Carol Viewer: viewer of Acme Corp (password password123)');
    expect(await seriousViolations(container)).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'viewer@example.com' }));
    expect(screen.getByLabelText('Email')).toHaveValue('viewer@example.com');
    expect(screen.getByLabelText('Password')).toHaveValue('password123');
  });

  it('lists no demo accounts where the gateway has none', async () => {
    renderApp('/login');
    await screen.findByRole('button', { name: 'Log in' });
    await act(async () => {
      await Promise.resolve();
    });
    expect(demoAccounts).toHaveBeenCalled();
    expect(screen.queryByRole('region', { name: /Demo accounts/ })).toBeNull();
  });
});
