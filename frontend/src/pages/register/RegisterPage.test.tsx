import { QueryClientProvider } from '@tanstack/react-query';
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { MemoryRouter, Route, Routes } from 'react-router';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import { LocationProbe, seriousViolations, testQueryClient } from '../../test/utils';
import { LoginPage } from '../login/LoginPage';
import { RegisterPage } from './RegisterPage';

vi.mock('../../api/endpoints', () => ({ register: vi.fn(), login: vi.fn() }));
const register = vi.mocked(endpoints.register);

function renderApp() {
  return render(
    <QueryClientProvider client={testQueryClient()}>
      <MemoryRouter initialEntries={['/register']}>
        <Routes>
          <Route path="/register" element={<RegisterPage />} />
          <Route path="/login" element={<LoginPage />} />
        </Routes>
        <LocationProbe />
      </MemoryRouter>
    </QueryClientProvider>,
  );
}

async function fillIn(email: string, password = 'longenough') {
  const user = userEvent.setup();
  await user.type(screen.getByLabelText('Email'), email);
  await user.type(screen.getByLabelText('Password'), password);
  await user.type(screen.getByLabelText('Repeat password'), password);
  await user.click(screen.getByRole('button', { name: 'Create account' }));
}

describe('register', () => {
  afterEach(() => {
    register.mockReset();
  });

  it('after the neutral 202 sends the user to log in with the email filled in', async () => {
    register.mockResolvedValue({ message: 'Registration received.' });
    const { container } = renderApp();
    expect(await seriousViolations(container)).toEqual([]);
    await fillIn('new@example.com');
    expect(await screen.findByRole('heading', { name: 'Log in' })).toBeInTheDocument();
    expect(screen.getByTestId('location')).toHaveTextContent('/login');
    expect(screen.getByText('Registration received. Log in with your email and password.')).toBeInTheDocument();
    expect(screen.getByLabelText('Email')).toHaveValue('new@example.com');
    expect(register).toHaveBeenCalledWith({ email: 'new@example.com', password: 'longenough' });
  });

  it('says when to come back after too many registrations', async () => {
    register.mockRejectedValue(new ApiError(429, 'too_many_requests', 'too many', [], 1500));
    renderApp();
    await fillIn('new@example.com');
    expect(await screen.findByText('Too many registrations from your network. Try again in 25 minutes.')).toBeInTheDocument();
    expect(screen.getByTestId('location')).toHaveTextContent('/register');
  });
});
