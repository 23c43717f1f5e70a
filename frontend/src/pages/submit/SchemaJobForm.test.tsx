/** The submit form for custom job types: a form built from the type's JSON Schema. */
import { screen, waitFor, within } from '@testing-library/react';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import { chooseType, errorOf, expectReverseErrorsShown, hintOf, reverseValidationError } from '../../test/forms';
import { PYDANTIC_SCHEMA, builtinTypes, jobType } from '../../test/jobTypes';
import { renderWithProviders, seriousViolations } from '../../test/utils';
import { JobForm } from './JobForm';

vi.mock('../../api/endpoints', () => ({
  submitJob: vi.fn(),
  listJobTypes: vi.fn(),
  getJob: vi.fn(() => new Promise(() => undefined)),
  listRetryPolicies: vi.fn(() => Promise.resolve({ items: [] })),
}));

const submitJob = vi.mocked(endpoints.submitJob);
const listJobTypes = vi.mocked(endpoints.listJobTypes);
const ACCEPTED = { jobId: '11111111-1111-4111-8111-111111111111', status: 'accepted' } as const;

describe('<JobForm> with custom types', () => {
  beforeEach(() => {
    submitJob.mockReset();
    listJobTypes.mockReset();
    listJobTypes.mockResolvedValue({
      types: [
        ...builtinTypes(),
        jobType('acme.reverse', { payloadSchema: PYDANTIC_SCHEMA, liveWorkers: 2, queue: 'text' }),
        jobType('acme.idle', { liveWorkers: 0 }),
        jobType('acme.union', { payloadSchema: { anyOf: [{ type: 'object' }, { type: 'array' }] } }),
      ],
    });
  });

  it('lists the built-in and the custom types, custom ones in a group of their own', async () => {
    renderWithProviders(<JobForm />);
    const select = screen.getByLabelText('Job type');
    const custom = await within(select).findByRole('group', { name: 'Custom (announced by workers)' });
    expect(within(custom).getAllByRole('option').map((o) => o.textContent)).toEqual([
      'acme.idle (no live worker)',
      'acme.reverse',
      'acme.union',
    ]);
    const builtin = within(select).getByRole('group', { name: 'Built-in' });
    expect(within(builtin).getAllByRole('option').map((o) => (o as HTMLOptionElement).value)).toEqual([
      'email',
      'image_resize',
      'report_generation',
      'simulate',
    ]);
    // the form opens on a built-in its defaults make whole, built from its schema too
    expect(select).toHaveValue('simulate');
    expect(screen.getByRole('textbox', { name: 'Min seconds' })).toHaveValue('1');
    expect(await screen.findByTestId('job-type-info')).toHaveTextContent('Built-in type · queue default · 2 live workers');

    await chooseType('acme.idle');
    expect(screen.getByTestId('job-type-info')).toHaveTextContent('Custom type, announced by workers · queue default · no live worker serves it right now');
    expect(screen.getByLabelText('Max attempts')).toHaveAccessibleDescription("1 to 20; empty: the type's default (5)");
  });

  it('renders an input per property: required markers, defaults and descriptions', async () => {
    renderWithProviders(<JobForm />);
    await chooseType('acme.reverse');

    const text = screen.getByRole('textbox', { name: 'Text' });
    expect(text).toHaveAttribute('aria-required', 'true');
    expect(text.closest('.field')?.querySelector('.required-mark')).toHaveTextContent('*');
    expect(hintOf(text)).toBe('The text to reverse. 1 to 20 characters.');
    const times = screen.getByRole('textbox', { name: 'Times' });
    expect(times).toHaveValue('2');
    expect(times).not.toHaveAttribute('aria-required');
    expect(hintOf(times)).toBe('A whole number, 1 to 5. Optional: empty is not sent.');
    expect(hintOf(screen.getByRole('textbox', { name: 'Ratio' }))).toBe('A number, more than 0 and less than 1.');
    const color = screen.getByRole('combobox', { name: 'Color' });
    expect(color).toHaveDisplayValue('red');
    expect(within(color).getAllByRole('option').map((o) => o.textContent)).toEqual(['Not set', 'red', 'blue']);
    const accent = screen.getByRole('combobox', { name: 'Accent' });
    expect(accent).toHaveDisplayValue('None (null)');
    expect(screen.getByRole('checkbox', { name: 'Shout' })).toBeChecked();
    expect(screen.getByRole('textbox', { name: 'Tags' })).toHaveValue('[]');
    expect(hintOf(screen.getByRole('textbox', { name: 'Tags' }))).toBe('A JSON array. Optional: empty is not sent.');
    expect(screen.getByRole('textbox', { name: 'Inner' })).toHaveValue('');
    expect(screen.getByLabelText('Notify on')).toHaveAttribute('type', 'date');
    expect(screen.getByTestId('job-type-info')).toHaveTextContent('queue text · 2 live workers');
  });

  it('checks the inputs on the client, then sends the payload the schema describes', async () => {
    submitJob.mockResolvedValue(ACCEPTED);
    renderWithProviders(<JobForm />);
    const user = await chooseType('acme.reverse');
    await user.clear(screen.getByRole('textbox', { name: 'Times' }));
    await user.type(screen.getByRole('textbox', { name: 'Times' }), '9');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));

    expect(submitJob).not.toHaveBeenCalled();
    expect(errorOf(screen.getByRole('textbox', { name: 'Text' }))).toBe('Required');
    expect(errorOf(screen.getByRole('textbox', { name: 'Times' }))).toBe('Must be 1 to 5');
    const summary = screen.getByTestId('error-summary');
    expect(within(summary).getByRole('link', { name: 'Times: Must be 1 to 5' })).toHaveAttribute('href', '#field-payload-times');

    await user.type(screen.getByRole('textbox', { name: 'Text' }), 'hello');
    await user.clear(screen.getByRole('textbox', { name: 'Times' }));
    await user.type(screen.getByRole('textbox', { name: 'Ratio' }), '0.5');
    await user.selectOptions(screen.getByRole('combobox', { name: 'Accent' }), 'blue');
    await user.click(screen.getByRole('checkbox', { name: 'Shout' }));
    await user.click(screen.getByRole('button', { name: 'Submit job' }));

    await waitFor(() => expect(submitJob).toHaveBeenCalledTimes(1));
    expect(submitJob.mock.calls[0]![0]).toEqual({
      type: 'acme.reverse',
      priority: 2,
      payload: { text: 'hello', ratio: 0.5, color: 'red', accent: 'blue', shout: false, tags: [] },
    });
  });

  it("shows the API's 422 details next to the matching inputs", async () => {
    submitJob.mockRejectedValue(reverseValidationError('payload', 1));
    renderWithProviders(<JobForm />);
    const user = await chooseType('acme.reverse');
    await user.type(screen.getByRole('textbox', { name: 'Text' }), 'hello');
    await user.type(screen.getByRole('textbox', { name: 'Ratio' }), '0.5');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));

    await expectReverseErrorsShown('payload', 1);
  });

  it('edits the payload as raw JSON, and falls back to it for a schema the form cannot show', async () => {
    submitJob.mockResolvedValue(ACCEPTED);
    renderWithProviders(<JobForm />);
    const user = await chooseType('acme.reverse');
    await user.type(screen.getByRole('textbox', { name: 'Text' }), 'hi');
    await user.type(screen.getByRole('textbox', { name: 'Ratio' }), '0.5');
    await user.click(screen.getByRole('checkbox', { name: 'Edit as raw JSON' }));
    const raw = screen.getByRole('textbox', { name: 'Payload (JSON object)' });
    expect(JSON.parse((raw as HTMLTextAreaElement).value)).toEqual({ text: 'hi', times: 2, ratio: 0.5, color: 'red', shout: true, tags: [] });
    expect(screen.queryByRole('textbox', { name: 'Text' })).toBeNull();

    await user.clear(raw);
    await user.click(raw);
    await user.paste('{"text": "raw", "ratio": 0.25, "extra": true}');
    // the form has no field for "extra": it stays in raw JSON
    await user.click(screen.getByRole('checkbox', { name: 'Edit as raw JSON' }));
    expect(screen.getByTestId('schema-raw-switch-error')).toHaveTextContent('The form has no field for extra');
    expect(screen.getByRole('checkbox', { name: 'Edit as raw JSON' })).toBeChecked();
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    await waitFor(() => expect(submitJob).toHaveBeenCalledTimes(1));
    expect(submitJob.mock.calls[0]![0].payload).toEqual({ text: 'raw', ratio: 0.25, extra: true });

    // a schema with anyOf at the top: raw JSON only, and its JSON is checked before sending
    await user.selectOptions(screen.getByLabelText('Job type'), 'acme.union');
    expect(screen.getByTestId('schema-form-unsupported')).toHaveTextContent('it uses anyOf at the top level');
    expect(screen.queryByRole('checkbox', { name: 'Edit as raw JSON' })).toBeNull();
    const unionRaw = screen.getByRole('textbox', { name: 'Payload (JSON object)' });
    expect(unionRaw).toHaveValue('{}');
    await user.clear(unionRaw);
    await user.type(unionRaw, 'nope');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    await waitFor(() => expect(errorOf(unionRaw)).toMatch(/^Not valid JSON/));
    expect(submitJob).toHaveBeenCalledTimes(1);
  });

  it('has no serious accessibility violations, also with errors shown', async () => {
    const { container } = renderWithProviders(<JobForm />);
    const user = await chooseType('acme.reverse');
    expect(await seriousViolations(container)).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(await seriousViolations(container)).toEqual([]);
  });
});
