import type { BulkAction, DeadLetterItem } from '../api/types';

/** The job's payload inside the snapshot the scheduler kept (`{type, payload, ...}`). */
export function snapshotPayload(letter: DeadLetterItem): Record<string, unknown> {
  const inner = letter.payloadSnapshot.payload;
  return typeof inner === 'object' && inner !== null && !Array.isArray(inner)
    ? (inner as Record<string, unknown>)
    : letter.payloadSnapshot;
}

/** The verb of a bulk action, as its buttons and notices say it. */
export const BULK_VERBS: Record<BulkAction, string> = { requeue: 'Requeue', discard: 'Discard' };

/** The bulk actions, in the order their buttons stand. */
export const BULK_ACTIONS: readonly BulkAction[] = ['requeue', 'discard'];
