import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { describe, expect, it, vi } from 'vitest';
import { Pagination } from './Pagination';

const button = (name: RegExp) => screen.getByRole('button', { name });
const maybeButton = (name: RegExp) => screen.queryByRole('button', { name });

describe('<Pagination>', () => {
  it('by default pages from 1 to the last with Previous and Next only', async () => {
    const onPage = vi.fn();
    const user = userEvent.setup();
    const { rerender } = render(<Pagination page={1} totalPages={3} totalItems={45} onPage={onPage} />);
    expect(screen.getByText('Page 1 of 3 · 45 total')).toBeInTheDocument();
    expect(button(/Previous/)).toBeDisabled();
    expect(maybeButton(/First page/)).not.toBeInTheDocument();
    expect(maybeButton(/Last page/)).not.toBeInTheDocument();
    await user.click(button(/Next/));
    expect(onPage).toHaveBeenLastCalledWith(2);

    rerender(<Pagination page={3} totalPages={3} totalItems={45} onPage={onPage} />);
    expect(button(/Next/)).toBeDisabled();
    await user.click(button(/Previous/));
    expect(onPage).toHaveBeenLastCalledWith(2);
  });

  it('offers no link to a page `reachable` refuses: Previous/Next disabled, no last-page link', async () => {
    const onPage = vi.fn();
    const user = userEvent.setup();
    // pages 1-500 and the next one are reachable; page 600's previous and the last page are not
    const reachable = (page: number) => page <= 500 || page === 601;
    render(<Pagination page={600} totalPages={1000} totalItems={20_000} onPage={onPage} reachable={reachable} jumps />);
    expect(button(/Previous/)).toBeDisabled();
    expect(button(/Next/)).toBeEnabled();
    expect(maybeButton(/Last page/)).not.toBeInTheDocument();
    await user.click(button(/First page/));
    expect(onPage).toHaveBeenLastCalledWith(1);
  });

  it('offers the last page while `reachable` allows it', async () => {
    const onPage = vi.fn();
    const user = userEvent.setup();
    const { rerender } = render(
      <Pagination page={2} totalPages={400} totalItems={8_000} onPage={onPage} reachable={(page) => page <= 500} jumps />,
    );
    expect(button(/First page/)).toBeEnabled();
    await user.click(button(/Last page/));
    expect(onPage).toHaveBeenLastCalledWith(400);

    rerender(<Pagination page={1} totalPages={400} totalItems={8_000} onPage={onPage} reachable={(page) => page <= 500} jumps />);
    expect(button(/First page/)).toBeDisabled();
  });

  it('shows nothing for an empty list', () => {
    const { container } = render(<Pagination page={1} totalPages={0} totalItems={0} onPage={() => undefined} />);
    expect(container).toBeEmptyDOMElement();
  });
});
