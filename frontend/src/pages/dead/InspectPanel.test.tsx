import { screen, waitFor } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import { ApiError } from '../../api/client';
import * as endpoints from '../../api/endpoints';
import type { DeadLetterItem } from '../../api/types';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { InspectPanel } from './InspectPanel';

vi.mock('../../api/endpoints', () => ({
  requeueDeadLetter: vi.fn(),
  discardDeadLetter: vi.fn(),
}));

const requeue = vi.mocked(endpoints.requeueDeadLetter);
const discard = vi.mocked(endpoints.discardDeadLetter);

const letter: DeadLetterItem = {
  id: 'dddddddd-0000-4000-8000-000000000001',
  jobId: 'aaaaaaaa-0000-4000-8000-000000000001',
  projectId: 'bbbbbbbb-0000-4000-8000-000000000001',
  jobType: 'email',
  jobStatus: 'dead',
  attempt: 3,
  reason: 'permanent_error',
  lastError: 'recipient refused',
  lastErrorClass: 'SMTPRecipientsRefused',
  fingerprint: 'SMTPRecipientsRefused: recipient refused',
  payloadSnapshot: { type: 'email', payload: { to: 'bad@example.com', subject: 'Hi', body: 'x' } },
  createdAt: '2030-01-01T00:00:00Z',
  resolvedAt: null,
  resolvedBy: null,
  resolution: null,
};

describe('<InspectPanel>', () => {
  beforeEach(() => {
    requeue.mockReset();
    discard.mockReset();
  });

  it('requeues with an edited payload only when it is a JSON object', async () => {
    const user = userEvent.setup();
    const onClose = vi.fn();
    requeue.mockResolvedValue({ deadLetterId: letter.id, jobId: letter.jobId, status: 'requeue_requested' });
    renderWithProviders(<InspectPanel letter={letter} onClose={onClose} />);
    await user.click(screen.getByLabelText('Requeue with an edited payload'));
    const editor = screen.getByLabelText('Payload (JSON object)');
    expect(JSON.parse((editor as HTMLTextAreaElement).value)).toEqual({ to: 'bad@example.com', subject: 'Hi', body: 'x' });

    await user.clear(editor);
    await user.type(editor, '{{"to": ');
    await user.click(screen.getByRole('button', { name: 'Requeue with this payload' }));
    expect(requeue).not.toHaveBeenCalled();
    expect(screen.getByTestId('requeue-payload-error')).toHaveTextContent(/Not valid JSON/);
    expect(editor).toHaveAttribute('aria-invalid', 'true');

    await user.clear(editor);
    await user.type(editor, '{{"to": "good@example.com", "subject": "Hi", "body": "x"}');
    await user.type(screen.getByLabelText(/Reason/), 'fixed the address');
    await user.click(screen.getByRole('button', { name: 'Requeue with this payload' }));
    await waitFor(() => expect(requeue).toHaveBeenCalledTimes(1));
    expect(requeue).toHaveBeenCalledWith(letter.id, {
      reason: 'fixed the address',
      payload: { to: 'good@example.com', subject: 'Hi', body: 'x' },
    });
    await waitFor(() => expect(onClose).toHaveBeenCalled());
  });

  it('shows the payload errors the API found', async () => {
    const user = userEvent.setup();
    requeue.mockRejectedValue(
      new ApiError(422, 'validation_error', 'request validation failed', [
        { field: 'payload.to', message: 'value is not a valid email address' },
      ]),
    );
    renderWithProviders(<InspectPanel letter={letter} onClose={vi.fn()} />);
    await user.click(screen.getByLabelText('Requeue with an edited payload'));
    await user.click(screen.getByRole('button', { name: 'Requeue with this payload' }));
    expect(await screen.findByTestId('requeue-payload-error')).toHaveTextContent(
      'payload.to: value is not a valid email address',
    );
  });

  it('discards after a confirmation', async () => {
    const user = userEvent.setup();
    discard.mockResolvedValue({ ...letter, resolvedAt: '2030-01-02T00:00:00Z', resolution: 'discarded' });
    const { container } = renderWithProviders(<InspectPanel letter={letter} onClose={vi.fn()} />);
    expect(await seriousViolations(container)).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Discard' }));
    expect(discard).not.toHaveBeenCalled();
    await user.click(screen.getByRole('button', { name: 'Yes, discard' }));
    await waitFor(() => expect(discard).toHaveBeenCalledWith(letter.id, undefined));
  });

  it('offers no requeue when the job is no longer dead', () => {
    renderWithProviders(<InspectPanel letter={{ ...letter, jobStatus: 'succeeded' }} onClose={vi.fn()} />);
    expect(screen.queryByRole('button', { name: /^Requeue/ })).not.toBeInTheDocument();
    expect(screen.getByText(/cannot be requeued/)).toBeInTheDocument();
  });
});
