import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import { optionValues } from '../../test/forms';
import { BUILTIN_FILTER_OPTIONS, builtinTypes, jobType } from '../../test/jobTypes';
import { renderWithProviders } from '../../test/utils';
import { DeadLettersPage } from './DeadLettersPage';

vi.mock('../../api/endpoints', () => ({
  deadLetterGroups: vi.fn(),
  listDeadLetters: vi.fn(),
  deadLetterActions: vi.fn(),
  getDeadLetter: vi.fn(),
  listJobTypes: vi.fn(),
}));

const deadLetterGroups = vi.mocked(endpoints.deadLetterGroups);
const listJobTypes = vi.mocked(endpoints.listJobTypes);

const GROUP = {
  fingerprint: 'ValueError: bad text',
  count: 2,
  reasons: ['permanent_error'],
  firstAt: '2030-01-01T00:00:00Z',
  lastAt: '2030-01-01T01:00:00Z',
  sampleError: 'bad text',
};

const location = () => screen.getByTestId('location').textContent;

describe('<DeadLettersPage> type filter', () => {
  beforeEach(() => {
    deadLetterGroups.mockReset();
    deadLetterGroups.mockResolvedValue({ items: [GROUP] });
    listJobTypes.mockReset();
    listJobTypes.mockResolvedValue({
      types: [jobType('acme.wordcount'), ...builtinTypes(), jobType('acme.reverse', { liveWorkers: 0 })],
    });
  });

  it('lists the custom types after the built-ins and keeps a type from the URL', async () => {
    const user = userEvent.setup();
    renderWithProviders(<DeadLettersPage />, { route: '/dead-letters?jobType=old.type' });
    await screen.findByTestId('dead-letter-groups');
    const select = screen.getByLabelText('Job type');
    await within(select).findByRole('option', { name: 'acme.reverse' });
    expect(optionValues(select)).toEqual([
      ...BUILTIN_FILTER_OPTIONS,
      'acme.reverse',
      'acme.wordcount',
      'old.type',
    ]);
    expect(select).toHaveValue('old.type');
    expect(deadLetterGroups).toHaveBeenCalledWith({ status: 'open', jobType: 'old.type' }, expect.anything());

    await user.selectOptions(select, 'acme.wordcount');
    expect(location()).toBe('/dead-letters?jobType=acme.wordcount');
    await waitFor(() =>
      expect(deadLetterGroups).toHaveBeenLastCalledWith({ status: 'open', jobType: 'acme.wordcount' }, expect.anything()),
    );
    expect(optionValues(select)).not.toContain('old.type');
  });

  it('offers only the URL type while the type list loads: no built-in is known before it', async () => {
    listJobTypes.mockImplementation(() => new Promise(() => undefined));
    renderWithProviders(<DeadLettersPage />, { route: '/dead-letters?jobType=acme.reverse' });
    await screen.findByTestId('dead-letter-groups');
    const select = screen.getByLabelText('Job type');
    expect(optionValues(select)).toEqual(['', 'acme.reverse']);
    expect(select).toHaveValue('acme.reverse');
  });
});
