import { screen, waitFor, within } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { expect } from 'vitest';
import { ApiError } from '../api/client';

/** The inline error an input is described by (its `field-error`), or null. */
export function errorOf(input: HTMLElement): string | null {
  const ids = (input.getAttribute('aria-describedby') ?? '').split(' ');
  const texts = ids.map((id) => document.getElementById(id)).filter((el) => el?.classList.contains('field-error'));
  return texts[0]?.textContent ?? null;
}

/** The hint an input is described by, or null. */
export function hintOf(input: HTMLElement): string | null {
  const ids = (input.getAttribute('aria-describedby') ?? '').split(' ');
  return ids.map((id) => document.getElementById(id)).find((el) => el?.classList.contains('hint'))?.textContent ?? null;
}

/** The values of a select's options, in order. */
export function optionValues(select: HTMLElement): string[] {
  return within(select)
    .getAllByRole('option')
    .map((o) => (o as HTMLOptionElement).value);
}

/** Chooses `type` in the `Job type` select once the type list has it. */
export async function chooseType(type: string) {
  const user = userEvent.setup();
  const select = screen.getByLabelText('Job type');
  await within(select).findByRole('option', { name: new RegExp(`^${type.replace('.', '\\.')}`) });
  await user.selectOptions(select, type);
  return user;
}

/**
 * The API's 422 for an `acme.reverse` payload (PYDANTIC_SCHEMA) at `prefix` (`payload`,
 * `jobTemplate.payload`): a text the schema's pattern refuses, a tag of the wrong type (at
 * index `tag`), a key the schema does not allow.
 */
export function reverseValidationError(prefix: string, tag: number): ApiError {
  return new ApiError(422, 'validation_error', 'request validation failed', [
    { field: `${prefix}.text`, message: "'hello' does not match '^[a-z]+!$'" },
    { field: `${prefix}.tags.${tag}`, message: '3 is not of type string' },
    { field: prefix, message: 'Additional properties are not allowed' },
  ]);
}

/** The form shows `reverseValidationError(prefix, tag)`: each detail at its input, the summary first. */
export async function expectReverseErrorsShown(prefix: string, tag: number) {
  const text = screen.getByRole('textbox', { name: 'Text' });
  await waitFor(() => expect(text).toHaveAttribute('aria-invalid', 'true'));
  expect(errorOf(text)).toBe("'hello' does not match '^[a-z]+!$'");
  expect(screen.getByTestId(`error-${prefix}.text`)).toBeVisible();
  expect(errorOf(screen.getByRole('textbox', { name: 'Tags' }))).toBe(`${tag}: 3 is not of type string`);
  expect(screen.getByTestId(`error-${prefix}`)).toHaveTextContent('Additional properties are not allowed');
  const summary = screen.getByTestId('error-summary');
  expect(within(summary).getByRole('link', { name: /^Text: 'hello' does not match/ })).toHaveAttribute(
    'href',
    `#field-${prefix.replaceAll('.', '-')}-text`,
  );
  expect(summary).toHaveFocus();
}
