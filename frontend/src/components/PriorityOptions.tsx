import { PRIORITIES, priorityLabel } from '../lib/format';

/** The options of a priority select, "Low (1)" to "High (3)", or the other way with `descending`. */
export function PriorityOptions({ descending = false }: { descending?: boolean }) {
  const order = descending ? [...PRIORITIES].reverse() : PRIORITIES;
  return (
    <>
      {order.map((priority) => (
        <option key={priority} value={String(priority)}>
          {priorityLabel(priority)} ({priority})
        </option>
      ))}
    </>
  );
}
