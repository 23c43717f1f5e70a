/** A list table's cells carry their column's name (`data-label`): what a phone's cards show. */
import { render, screen } from '@testing-library/react';
import userEvent from '@testing-library/user-event';
import { useState } from 'react';
import { describe, expect, it } from 'vitest';
import { ListTable, type Column } from './ListTable';

const COLUMNS: readonly Column[] = [
  { label: <input type="checkbox" aria-label="Select all" /> },
  {
    label: (
      <button type="button">
        Job<span aria-hidden="true"> ↕</span>
      </button>
    ),
  },
  { label: 'Reason' },
  { label: <span className="visually-hidden">Inspect</span> },
];

/** A row drawn by a component of its own, which changes without the table rendering again. */
function Row({ name }: { name: string }) {
  const [open, setOpen] = useState(false);
  return (
    <tr>
      {open ? (
        <td colSpan={4}>{name} in full</td>
      ) : (
        <>
          <td>
            <input type="checkbox" aria-label={`Select ${name}`} />
          </td>
          <td>{name}</td>
          <th scope="row">reason of {name}</th>
          <td>
            <button type="button" onClick={() => setOpen(true)}>
              Inspect {name}
            </button>
          </td>
        </>
      )}
    </tr>
  );
}

describe('<ListTable> cell labels', () => {
  it('labels each body cell with its header words, a checkbox or hidden header giving none', async () => {
    render(
      <ListTable columns={COLUMNS} rows={['a', 'b']}>
        {(name) => <Row key={name} name={name} />}
      </ListTable>,
    );
    const table = screen.getByRole('table');
    expect(table).toHaveClass('list-table');
    const cell = screen.getByText('a');
    expect(cell).toHaveAttribute('data-label', 'Job');
    expect(screen.getByText('reason of a')).toHaveAttribute('data-label', 'Reason');
    expect(screen.getByRole('checkbox', { name: 'Select a' }).parentElement).not.toHaveAttribute('data-label');
    expect(screen.getByRole('button', { name: 'Inspect a' }).parentElement).not.toHaveAttribute('data-label');

    // the row's own change: its spanning cell is labelled by no single column
    await userEvent.click(screen.getByRole('button', { name: 'Inspect b' }));
    expect(screen.getByText('b in full')).not.toHaveAttribute('data-label');
  });

  it('labels the rows that come later', async () => {
    function Growing() {
      const [rows, setRows] = useState(['a']);
      return (
        <>
          <button type="button" onClick={() => setRows(['a', 'c'])}>
            More
          </button>
          <ListTable columns={COLUMNS} rows={rows}>
            {(name) => <Row key={name} name={name} />}
          </ListTable>
        </>
      );
    }
    render(<Growing />);
    await userEvent.click(screen.getByRole('button', { name: 'More' }));
    expect(screen.getByText('c')).toHaveAttribute('data-label', 'Job');
  });
});
