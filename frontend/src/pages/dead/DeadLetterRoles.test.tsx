/** Requeue, discard and the bulk actions by role in the letter's project (docs/tenancy.md). */
import { screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import type { DeadLetterItem } from '../../api/types';
import { builtinTypes } from '../../test/jobTypes';
import { ALPHA, PERSONAL_PROJECT, page, teamAccess } from '../../test/tenancy';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { DeadLettersPage } from './DeadLettersPage';

vi.mock('../../api/endpoints', () => ({
  deadLetterGroups: vi.fn(),
  listDeadLetters: vi.fn(),
  deadLetterActions: vi.fn(),
  getDeadLetter: vi.fn(),
  listJobTypes: vi.fn(),
  requeueDeadLetter: vi.fn(),
  discardDeadLetter: vi.fn(),
  bulkDeadLetters: vi.fn(),
}));

function letter(id: string, projectId: string): DeadLetterItem {
  return {
    id,
    jobId: `${id.slice(0, 8)}-0000-4000-8000-000000000001`,
    projectId,
    jobType: 'email',
    jobStatus: 'dead',
    attempt: 3,
    reason: 'permanent_error',
    lastError: 'recipient refused',
    lastErrorClass: 'SMTPRecipientsRefused',
    fingerprint: 'SMTPRecipientsRefused: recipient refused',
    payloadSnapshot: { type: 'email', payload: {} },
    createdAt: '2030-01-01T00:00:00Z',
    resolvedAt: null,
    resolvedBy: null,
    resolution: null,
  };
}

const A = 'aaaaaaaa-1111-4111-8111-111111111111';
const B = 'bbbbbbbb-1111-4111-8111-111111111111';

describe('<DeadLettersPage> by role', () => {
  beforeEach(() => {
    vi.mocked(endpoints.listJobTypes).mockResolvedValue({ types: builtinTypes() });
    vi.mocked(endpoints.listDeadLetters).mockResolvedValue(page([letter(A, ALPHA), letter(B, PERSONAL_PROJECT)]));
    vi.mocked(endpoints.deadLetterGroups).mockResolvedValue({
      items: [{ fingerprint: 'f', count: 2, reasons: ['permanent_error'], firstAt: '2030-01-01T00:00:00Z', lastAt: '2030-01-01T00:00:00Z', sampleError: null }],
    });
  });

  it("shows a viewer of the chosen project its letters, with neither requeue, discard nor bulk actions", async () => {
    vi.mocked(endpoints.listDeadLetters).mockResolvedValue(page([letter(A, ALPHA)]));
    const { container } = renderWithProviders(<DeadLettersPage />, {
      route: `/dead-letters?tab=letters&letter=${A}&project=${ALPHA}`,
      access: teamAccess({ role: 'viewer', projectId: ALPHA }),
    });
    const panel = await screen.findByTestId('dead-letter-inspect');
    expect(within(panel).queryByRole('button', { name: 'Requeue' })).toBeNull();
    expect(within(panel).queryByRole('button', { name: 'Discard' })).toBeNull();
    expect(within(panel).getByTestId('dead-letter-denied')).toHaveTextContent('You are a viewer in Alpha');
    expect(screen.queryByRole('button', { name: /selected…/ })).toBeNull();
    expect(screen.getByTestId('bulk-letters-denied')).toBeInTheDocument();
    expect(screen.queryByRole('checkbox', { name: /Select/ })).toBeNull();
    expect(await seriousViolations(container)).toEqual([]);
  });

  it('hides the groups’ bulk actions from a viewer of the chosen project', async () => {
    renderWithProviders(<DeadLettersPage />, {
      route: `/dead-letters?project=${ALPHA}`,
      access: teamAccess({ role: 'viewer', projectId: ALPHA }),
    });
    expect(await screen.findByTestId('dead-letter-groups')).toBeInTheDocument();
    expect(screen.queryByRole('button', { name: /Requeue all/ })).toBeNull();
    expect(screen.getByTestId('bulk-groups-denied')).toBeInTheDocument();
  });

  it("with all projects chosen, a letter's own project decides", async () => {
    renderWithProviders(<DeadLettersPage />, {
      route: `/dead-letters?tab=letters&letter=${B}`,
      access: teamAccess({ role: 'viewer' }),
    });
    const panel = await screen.findByTestId('dead-letter-inspect');
    expect(within(panel).getByRole('button', { name: 'Requeue' })).toBeEnabled();
    await waitFor(() => expect(screen.getAllByTestId('dead-letter-row')).toHaveLength(2));
    expect(screen.getByRole('button', { name: 'Requeue selected…' })).toBeInTheDocument();
  });
});
