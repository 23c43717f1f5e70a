/**
 * The submit form for the built-in types: built from the schemas the worker announces, as any
 * custom type's (builtinPayloadSchemas.json is the worker's models' JSON Schema), with nothing
 * special about them but the registry's `builtin` flag.
 */
import { fireEvent, screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { beforeEach, describe, expect, it, vi } from 'vitest';
import * as endpoints from '../../api/endpoints';
import { chooseType, errorOf, hintOf, optionValues } from '../../test/forms';
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
const PNG = new Uint8Array([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0, 0, 0, 13, 0x49, 0x48, 0x44, 0x52]);

/** The payload inputs shown (the fieldset's labelled controls), by accessible name. */
function payloadControls(): string[] {
  const fieldset = screen.getByTestId('schema-payload');
  return Array.from(fieldset.querySelectorAll('input, select, textarea'))
    .filter((el) => el.id.startsWith('field-payload-'))
    .map((el) => el.id.replace('field-payload-', ''));
}

describe('<JobForm> with the built-in types, from their schemas', () => {
  beforeEach(() => {
    submitJob.mockReset();
    listJobTypes.mockReset();
    listJobTypes.mockResolvedValue({ types: builtinTypes() });
  });

  it('email: three required fields from the schema, the body a text area, the pattern told in words', async () => {
    submitJob.mockResolvedValue(ACCEPTED);
    renderWithProviders(<JobForm />);
    const user = await chooseType('email');
    expect(payloadControls()).toEqual(['to', 'subject', 'body']);
    expect(screen.getByTestId('schema-description')).toHaveTextContent("One plain-text message through the platform's SMTP relay.");

    const to = screen.getByRole('textbox', { name: 'To' });
    const subject = screen.getByRole('textbox', { name: 'Subject' });
    const body = screen.getByRole('textbox', { name: 'Body' });
    expect(to).toHaveAttribute('type', 'email');
    expect(subject.tagName).toBe('INPUT');
    expect(body.tagName).toBe('TEXTAREA'); // maxLength 100,000
    for (const input of [to, subject, body]) {
      expect(input).toHaveAttribute('aria-required', 'true');
      expect(input.closest('.field')?.querySelector('.required-mark')).toHaveTextContent('*');
    }
    expect(hintOf(to)).toBe('One address; no display name. An email address. At most 320 characters.');
    expect(hintOf(subject)).toBe('One line: no line breaks or control characters. 1 to 200 characters.');

    await user.type(to, 'someone@example.com');
    fireEvent.change(subject, { target: { value: 'Hi\u0007there' } });
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(submitJob).not.toHaveBeenCalled();
    expect(errorOf(subject)).toBe('Must not contain control characters or line breaks');
    expect(errorOf(body)).toBe('Required');

    await user.clear(subject);
    await user.type(subject, 'Hello');
    await user.type(body, 'Line one{Enter}Line two');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    await waitFor(() => expect(submitJob).toHaveBeenCalledTimes(1));
    expect(submitJob.mock.calls[0]![0]).toEqual({
      type: 'email',
      priority: 2,
      payload: { to: 'someone@example.com', subject: 'Hello', body: 'Line one\nLine two' },
    });
  });

  it('simulate: numbers with their bounds and defaults from the schema, the form opening on it', async () => {
    submitJob.mockResolvedValue(ACCEPTED);
    const user = userEvent.setup();
    renderWithProviders(<JobForm />);
    // the first listed type a live worker serves whose defaults make a whole payload
    await waitFor(() => expect(screen.getByLabelText('Job type')).toHaveValue('simulate'));
    expect(payloadControls()).toEqual(['immediateFailureRate', 'failureRate', 'minSeconds', 'maxSeconds', 'seed']);
    // the help text tells the defaults the fields hold (it once said 0.2 / 0.5 over 0 / 0)
    expect(screen.getByTestId('schema-description')).toHaveTextContent('both failure rates default to 0 ({} runs 1-4 s and succeeds)');
    const immediate = screen.getByRole('textbox', { name: 'Immediate failure rate' });
    expect(immediate).toHaveValue('0');
    expect(screen.getByRole('textbox', { name: 'Failure rate' })).toHaveValue('0');
    expect(immediate).not.toHaveAttribute('aria-required');
    expect(hintOf(immediate)).toBe('Chance (0-1) that an attempt fails before it starts working. A number, 0 to 1. Optional: empty is not sent.');
    expect(screen.getByRole('textbox', { name: 'Min seconds' })).toHaveValue('1');
    expect(screen.getByRole('textbox', { name: 'Max seconds' })).toHaveValue('4');
    const seed = screen.getByRole('textbox', { name: 'Seed' });
    expect(seed).toHaveValue('');
    // a signed 64-bit range says nothing a JavaScript number can check: no bounds shown
    expect(hintOf(seed)).toBe('Makes the outcome the same every time. A whole number. Optional: empty is not sent.');

    await user.clear(immediate);
    await user.type(immediate, '1.5');
    await user.clear(screen.getByRole('textbox', { name: 'Max seconds' }));
    await user.type(screen.getByRole('textbox', { name: 'Max seconds' }), '301');
    await user.type(seed, '9007199254740993');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(submitJob).not.toHaveBeenCalled();
    expect(errorOf(immediate)).toBe('Must be 0 to 1');
    expect(errorOf(screen.getByRole('textbox', { name: 'Max seconds' }))).toBe('Must be 0 to 300');
    expect(errorOf(seed)).toMatch(/^Enter a whole number between -9,007,199,254,740,991 and 9,007,199,254,740,991$/);

    await user.clear(immediate);
    await user.clear(screen.getByRole('textbox', { name: 'Max seconds' }));
    await user.type(screen.getByRole('textbox', { name: 'Max seconds' }), '2.5');
    await user.clear(seed);
    await user.type(seed, '7');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    await waitFor(() => expect(submitJob).toHaveBeenCalledTimes(1));
    expect(submitJob.mock.calls[0]![0].payload).toEqual({ failureRate: 0, minSeconds: 1, maxSeconds: 2.5, seed: 7 });
  });

  it('image_resize: the base64 field is a file input, refused when the schema refuses the file', async () => {
    submitJob.mockResolvedValue(ACCEPTED);
    renderWithProviders(<JobForm />);
    const user = await chooseType('image_resize');
    const image = screen.getByLabelText(/^Image/);
    expect(image).toHaveAttribute('type', 'file');
    expect(image).toHaveAttribute('aria-required', 'true');
    expect(hintOf(image)).toBe('PNG, JPEG or WebP, base64-encoded; at most 5 MB. A file of at most 5 MB.');
    const format = screen.getByRole('combobox', { name: 'Output format' });
    expect(optionValues(format)).toEqual(['', '"png"', '"jpeg"', '"webp"']);

    await user.upload(image, new File(['GIF89a....'], 'anim.gif', { type: 'image/gif' }));
    await waitFor(() => expect(errorOf(image)).toBe('Must be a PNG, JPEG or WebP image in base64'));
    const huge = new File([new Uint8Array(8)], 'huge.png', { type: 'image/png' });
    Object.defineProperty(huge, 'size', { value: 6 * 1024 * 1024 });
    await user.upload(image, huge);
    await waitFor(() => expect(errorOf(image)).toBe('The file must be at most 5 MB'));

    await user.upload(image, new File([PNG], 'dot.png', { type: 'image/png' }));
    await waitFor(() => expect(hintOf(image)).toMatch(/Chosen: dot\.png\.$/));
    expect(errorOf(image)).toBeNull();
    await user.type(screen.getByRole('textbox', { name: 'Width' }), '64');
    await user.type(screen.getByRole('textbox', { name: 'Height' }), '32');
    await user.selectOptions(format, 'webp');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    await waitFor(() => expect(submitJob).toHaveBeenCalledTimes(1));
    expect(submitJob.mock.calls[0]![0].payload).toEqual({
      imageBase64: btoa(String.fromCharCode(...PNG)),
      width: 64,
      height: 32,
      format: 'webp',
    });
  });

  it('report_generation: its one report preselected, dates as date inputs, the format to choose', async () => {
    renderWithProviders(<JobForm />);
    const user = await chooseType('report_generation');
    expect(screen.getByRole('combobox', { name: 'Report' })).toHaveDisplayValue('jobs_summary');
    expect(screen.getByLabelText('From')).toHaveAttribute('type', 'date');
    expect(screen.getByLabelText('To')).toHaveAttribute('type', 'date');
    const format = screen.getByRole('combobox', { name: 'Format' });
    expect(format).toHaveAttribute('aria-required', 'true');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(errorOf(format)).toBe('Choose one');
    expect(submitJob).not.toHaveBeenCalled();
  });

  it('has no serious accessibility violations in a built-in type, also with errors shown', async () => {
    const { container } = renderWithProviders(<JobForm />);
    const user = await chooseType('image_resize');
    expect(await seriousViolations(container)).toEqual([]);
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(await seriousViolations(container)).toEqual([]);
  });
});

describe('<JobForm>: the types are the registry’s, the built-ins no special case', () => {
  beforeEach(() => {
    submitJob.mockReset();
    listJobTypes.mockReset();
  });

  it('offers only the types listed: a built-in no worker announced is not offered', async () => {
    const [email] = builtinTypes();
    listJobTypes.mockResolvedValue({ types: [jobType('acme.reverse', { payloadSchema: PYDANTIC_SCHEMA }), email!] });
    renderWithProviders(<JobForm />);
    const select = screen.getByLabelText('Job type');
    await within(select).findByRole('option', { name: 'acme.reverse' });
    expect(optionValues(select)).toEqual(['email', 'acme.reverse']);
    expect(within(select).getByRole('group', { name: 'Built-in' })).toHaveTextContent('email');
    // neither is sendable as it opens: the first type a live worker serves
    expect(select).toHaveValue('email');
    expect(payloadControls()).toEqual(['to', 'subject', 'body']);
  });

  it('without built-ins listed there is no built-in group, and a custom type may be the default', async () => {
    listJobTypes.mockResolvedValue({ types: [jobType('acme.idle', { liveWorkers: 0 }), jobType('acme.reverse', { payloadSchema: PYDANTIC_SCHEMA })] });
    renderWithProviders(<JobForm />);
    const select = screen.getByLabelText('Job type');
    await within(select).findByRole('option', { name: 'acme.reverse' });
    expect(within(select).queryByRole('group', { name: 'Built-in' })).toBeNull();
    expect(select).toHaveValue('acme.reverse');
    expect(screen.getByTestId('job-type-info')).toHaveTextContent('Custom type, announced by workers');
  });

  it('offers no type when the list cannot be read, and says so', async () => {
    const user = userEvent.setup();
    listJobTypes.mockRejectedValue(new Error('registry down'));
    renderWithProviders(<JobForm />);
    expect(await screen.findByTestId('job-types-error')).toHaveTextContent('The job types could not be loaded: registry down');
    const select = screen.getByLabelText('Job type');
    expect(optionValues(select)).toEqual(['']);
    expect(select).toHaveDisplayValue('No job type is listed');
    await user.click(screen.getByRole('button', { name: 'Submit job' }));
    expect(errorOf(select)).toBe('Choose a job type');
    expect(submitJob).not.toHaveBeenCalled();
  });
});
