import { screen } from '@testing-library/react';
import { describe, expect, it } from 'vitest';
import { ApiError } from '../api/client';
import { renderWithProviders } from '../test/utils';
import { ErrorState } from './states';

describe('<ErrorState>', () => {
  it('offers the way back to all projects when the API no longer finds the project followed', () => {
    renderWithProviders(<ErrorState error={new ApiError(404, 'not_found', 'project not found')} />, {
      route: '/jobs?status=dead&project=gone',
    });
    expect(screen.getByRole('alert')).toHaveTextContent('project not found (not_found)');
    expect(screen.getByRole('link', { name: 'Show all projects' })).toHaveAttribute('href', '/jobs?status=dead');
  });

  it('shows any other error as it is', () => {
    renderWithProviders(<ErrorState error={new ApiError(404, 'not_found', 'job x not found')} />);
    expect(screen.queryByRole('link')).toBeNull();
  });
});
