import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import { chooseType, errorOf } from '../../test/forms';
import { builtinTypes } from '../../test/jobTypes';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { JobForm } from './JobForm';

vi.mock('../../api/endpoints', () => ({
  submitJob: vi.fn(),
  listJobTypes: vi.fn(() => Promise.resolve({ types: builtinTypes() })),
  getJob: vi.fn(() => new Promise(() => undefined)),
  listRetryPolicies: vi.fn(() =>
    Promise.resolve({
      items: [
        { name: 'gentle', strategy: 'linear', baseDelayMs: 2000, multiplier: 1, maxDelayMs: 30000, jitter: true, maxAttempts: 5, createdBy: 'a', createdAt: '2030-01-01T00:00:00Z' },
      ],
    }),
  ),
}));

const submitJob = vi.mocked(endpoints.submitJob);
const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-4[0-9a-f]{3}-[89ab][0-9a-f]{3}-[0-9a-f]{12}$/;

describe('<JobForm>', () => {
  beforeEach(() => {
    submitJob.mockReset();
  });

  it('validates on the client like the API: nothing is sent while fields are wrong', async () => {
    const user = userEvent.setup();
    renderWithProviders(<JobForm />);
    await chooseType('email');
    await user.type(screen.getByRole('textbox', { name: 'To' }), 'not-an-email');
    await user.type(screen.getByLabelText('Max attempts', { exact: false }), '25');
    await user.click(screen.getByRole('radio', { name: 'After a delay' }));
    await user.type(screen.getByLabelText('Delay (seconds)'), '1.5');
    await user.click(screen.getByRole('radio', { name: 'Custom' }));
    await user.type(screen.getByLabelText('Base delay (ms)'), '5000');
    await user.type(screen.getByLabelText('Max delay (ms)'), '1000');
    await user.type(screen.getByLabelText('Depends on'), 'abc, abc');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));

    expect(submitJob).not.toHaveBeenCalled();
    const to = screen.getByRole('textbox', { name: 'To' });
    expect(to).toHaveAttribute('aria-invalid', 'true');
    expect(errorOf(to)).toBe('Enter a valid email address');
    expect(errorOf(screen.getByRole('textbox', { name: 'Subject' }))).toBe('Required');
    expect(errorOf(screen.getByLabelText('Max attempts', { exact: false }))).toBe('Max attempts must be between 1 and 20');
    expect(errorOf(screen.getByLabelText('Delay (seconds)'))).toBe('Enter a whole number');
    expect(errorOf(screen.getByLabelText('Max delay (ms)'))).toBe('Max delay must be at least the base delay');
    expect(errorOf(screen.getByLabelText('Depends on'))).toMatch(/not a job id: abc.*each job id only once/);
    const summary = screen.getByTestId('error-summary');
    expect(summary).toHaveAttribute('role', 'alert');
    expect(within(summary).getByRole('link', { name: /To: Enter a valid email address/ })).toHaveAttribute(
      'href',
      '#field-payload-to',
    );
    expect(to).toHaveAttribute('id', 'field-payload-to');
  });

  it('sends a valid job with a fresh Idempotency-Key per submission', async () => {
    const user = userEvent.setup();
    submitJob.mockResolvedValue({ jobId: '11111111-1111-4111-8111-111111111111', status: 'accepted' });
    renderWithProviders(<JobForm />);
    await user.click(screen.getByRole('radio', { name: 'High (3)' }));
    await user.clear(screen.getByLabelText('Max seconds'));
    await user.type(screen.getByLabelText('Max seconds'), '2');
    await user.type(screen.getByLabelText('Timeout (seconds)'), '30');
    await user.click(screen.getByRole('radio', { name: 'Stored policy' }));
    await user.selectOptions(await screen.findByLabelText('Policy'), 'gentle');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));

    await waitFor(() => expect(submitJob).toHaveBeenCalledTimes(1));
    const [body, key] = submitJob.mock.calls[0]!;
    expect(body).toEqual({
      type: 'simulate',
      priority: 3,
      payload: { immediateFailureRate: 0, failureRate: 0, minSeconds: 1, maxSeconds: 2 },
      timeoutSeconds: 30,
      retryPolicy: 'gentle',
    });
    expect(key).toMatch(UUID);
    expect(await screen.findByTestId('submitted-job-link')).toHaveAttribute(
      'href',
      '/jobs/11111111-1111-4111-8111-111111111111',
    );

    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    await waitFor(() => expect(submitJob).toHaveBeenCalledTimes(2));
    expect(submitJob.mock.calls[1]![1]).toMatch(UUID);
    expect(submitJob.mock.calls[1]![1]).not.toBe(key);
  });

  it('shows the API field errors next to their fields', async () => {
    const user = userEvent.setup();
    const parent = '22222222-2222-4222-8222-222222222222';
    submitJob.mockRejectedValue(
      new ApiError(422, 'validation_error', 'request validation failed', [
        { field: 'payload.to', message: 'value is not a valid email address: the domain does not exist' },
        { field: 'dependsOn.0', message: 'unknown job' },
        { field: 'runAt', message: 'at most 1 year ahead' },
      ]),
    );
    renderWithProviders(<JobForm />);
    await chooseType('email');
    await user.type(screen.getByRole('textbox', { name: 'To' }), 'a@nowhere.example');
    await user.type(screen.getByRole('textbox', { name: 'Subject' }), 'Hi');
    await user.type(screen.getByRole('textbox', { name: 'Body' }), 'Hello');
    await user.type(screen.getByLabelText('Depends on'), parent);
    await user.click(screen.getByRole('button', { name: 'Submit job' }));

    await waitFor(() => expect(submitJob).toHaveBeenCalledTimes(1));
    expect(submitJob.mock.calls[0]![0]).toMatchObject({
      type: 'email',
      payload: { to: 'a@nowhere.example', subject: 'Hi', body: 'Hello' },
      dependsOn: [parent],
    });
    const to = screen.getByRole('textbox', { name: 'To' });
    await waitFor(() => expect(to).toHaveAttribute('aria-invalid', 'true'));
    expect(errorOf(to)).toBe('value is not a valid email address: the domain does not exist');
    expect(errorOf(screen.getByLabelText('Depends on'))).toBe('22222222: unknown job');
    // a field the form does not show right now is still listed in the summary
    const summary = screen.getByTestId('error-summary');
    expect(within(summary).getByText(/Run at: at most 1 year ahead/)).toBeInTheDocument();
    expect(summary).toHaveFocus();
  });

  it('shows a conflict without field details as a message', async () => {
    const user = userEvent.setup();
    submitJob.mockRejectedValue(new ApiError(409, 'conflict', 'Idempotency-Key reused with another body'));
    renderWithProviders(<JobForm />);
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(await screen.findByText('Idempotency-Key reused with another body')).toBeInTheDocument();
  });

  it('has no serious accessibility violations, also with errors shown', async () => {
    const user = userEvent.setup();
    const { container } = renderWithProviders(<JobForm />);
    await user.click(screen.getByRole('radio', { name: 'Stored policy' }));
    await screen.findByRole('option', { name: /gentle/ });
    expect(await seriousViolations(container)).toEqual([]);
    await chooseType('email');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(await seriousViolations(container)).toEqual([]);
  });
});
