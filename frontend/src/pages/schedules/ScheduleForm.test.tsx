/** The create-schedule form with custom job types: the template's payload from the type's schema. */
import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import type { ScheduleView } from '../../api/types';
import { chooseType, errorOf, expectReverseErrorsShown, reverseValidationError } from '../../test/forms';
import { PYDANTIC_SCHEMA, builtinTypes, jobType } from '../../test/jobTypes';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { ScheduleForm } from './ScheduleForm';

vi.mock('../../api/endpoints', () => ({
  createSchedule: vi.fn(),
  listJobTypes: vi.fn(),
  listRetryPolicies: vi.fn(() => Promise.resolve({ items: [] })),
}));

const createSchedule = vi.mocked(endpoints.createSchedule);
const listJobTypes = vi.mocked(endpoints.listJobTypes);

async function fillReverse(user: ReturnType<typeof userEvent.setup>) {
  await user.type(screen.getByLabelText('Name'), 'nightly reverse');
  await user.type(screen.getByRole('textbox', { name: 'Text' }), 'hello');
  await user.type(screen.getByRole('textbox', { name: 'Ratio' }), '0.5');
}

describe('<ScheduleForm> with custom types', () => {
  beforeEach(() => {
    createSchedule.mockReset();
    listJobTypes.mockReset();
    listJobTypes.mockResolvedValue({
      types: [...builtinTypes(), jobType('acme.reverse', { payloadSchema: PYDANTIC_SCHEMA, queue: 'text' })],
    });
  });

  it('offers the custom types; every type, built-in or custom, gets fields from its schema', async () => {
    renderWithProviders(<ScheduleForm />);
    const select = screen.getByLabelText('Job type');
    const custom = await within(select).findByRole('group', { name: 'Custom (announced by workers)' });
    expect(within(custom).getAllByRole('option').map((o) => o.textContent)).toEqual(['acme.reverse']);
    expect(select).toHaveValue('simulate');
    expect(screen.getByRole('textbox', { name: 'Min seconds' })).toHaveValue('1');
    expect(screen.getByRole('textbox', { name: 'Min seconds' })).toHaveAttribute('id', 'field-jobTemplate-payload-minSeconds');

    await chooseType('acme.reverse');
    expect(screen.queryByLabelText('Min seconds')).toBeNull();
    expect(screen.getByRole('group', { name: 'Payload: acme.reverse' })).toBeInTheDocument();
    const text = screen.getByRole('textbox', { name: 'Text' });
    expect(text).toHaveAttribute('id', 'field-jobTemplate-payload-text');
    expect(text).toHaveAttribute('aria-required', 'true');
    expect(screen.getByRole('textbox', { name: 'Times' })).toHaveValue('2');
    expect(screen.getByTestId('job-type-info')).toHaveTextContent('Custom type, announced by workers · queue text');
  });

  it('checks the payload on the client, then posts the job template with the payload the schema describes', async () => {
    createSchedule.mockResolvedValue({ name: 'nightly reverse' } as ScheduleView);
    renderWithProviders(<ScheduleForm />);
    const user = await chooseType('acme.reverse');
    await user.type(screen.getByLabelText('Name'), 'nightly reverse');
    await user.click(screen.getByRole('button', { name: 'Create schedule' }));

    expect(createSchedule).not.toHaveBeenCalled();
    expect(errorOf(screen.getByRole('textbox', { name: 'Text' }))).toBe('Required');
    const summary = screen.getByTestId('error-summary');
    expect(within(summary).getByRole('link', { name: 'Text: Required' })).toHaveAttribute(
      'href',
      '#field-jobTemplate-payload-text',
    );

    await user.type(screen.getByRole('textbox', { name: 'Text' }), 'hello');
    await user.type(screen.getByRole('textbox', { name: 'Ratio' }), '0.5');
    await user.click(screen.getByRole('checkbox', { name: 'Shout' }));
    await user.click(screen.getByRole('button', { name: 'Create schedule' }));
    await waitFor(() => expect(createSchedule).toHaveBeenCalledTimes(1));
    expect(createSchedule.mock.calls[0]![0]).toEqual({
      name: 'nightly reverse',
      cron: '*/5 * * * *',
      timezone: expect.any(String) as string,
      jobTemplate: {
        type: 'acme.reverse',
        priority: 1,
        payload: { text: 'hello', ratio: 0.5, times: 2, color: 'red', shout: false, tags: [] },
      },
    });
  });

  it("shows the API's 422 details at the custom type's fields", async () => {
    createSchedule.mockRejectedValue(reverseValidationError('jobTemplate.payload', 0));
    renderWithProviders(<ScheduleForm />);
    const user = await chooseType('acme.reverse');
    await fillReverse(user);
    await user.click(screen.getByRole('button', { name: 'Create schedule' }));

    await expectReverseErrorsShown('jobTemplate.payload', 0);
  });

  it('sends the payload written as raw JSON', async () => {
    createSchedule.mockResolvedValue({ name: 'nightly reverse' } as ScheduleView);
    renderWithProviders(<ScheduleForm />);
    const user = await chooseType('acme.reverse');
    await fillReverse(user);
    await user.click(screen.getByRole('checkbox', { name: 'Edit as raw JSON' }));
    const raw = screen.getByRole('textbox', { name: 'Payload (JSON object)' });
    expect(raw).toHaveAttribute('id', 'field-jobTemplate-payload');
    await user.clear(raw);
    await user.click(raw);
    await user.paste('{"text": "raw", "ratio": 0.25}');
    await user.click(screen.getByRole('button', { name: 'Create schedule' }));
    await waitFor(() => expect(createSchedule).toHaveBeenCalledTimes(1));
    expect(createSchedule.mock.calls[0]![0].jobTemplate.payload).toEqual({ text: 'raw', ratio: 0.25 });
  });

  it("has no serious accessibility violations in a custom type's template, also with errors shown", async () => {
    renderWithProviders(<ScheduleForm />);
    const user = await chooseType('acme.reverse');
    // the job template only: axe over the time zone select's ~400 options takes too long here
    const template = screen.getByRole('group', { name: 'The job each fire creates' });
    expect(await seriousViolations(template)).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Create schedule' }));
    await screen.findByTestId('error-summary');
    expect(await seriousViolations(template)).toEqual([]);
  });
});
