import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { errorMessage } from '../../api/client';
import { bulkDeadLetters } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { BulkAction, BulkResult, BulkSelector } from '../../api/types';
import { ListTable, type Column } from '../../components/ListTable';
import { ErrorState, Loading } from '../../components/states';
import { BULK_VERBS } from '../../lib/deadLetters';
import { formatDateTime, shortId } from '../../lib/format';
import { notify } from '../../lib/notices';
import { TableRegion } from '../../components/TableRegion';

const SAMPLE_COLUMNS: readonly Column[] = [
  { label: 'Job' },
  { label: 'Type' },
  { label: 'Reason' },
  { label: 'Last error' },
  { label: 'Dead since' },
];

/** A bulk action asked for: what to do to which letters. */
export interface BulkIntent {
  action: BulkAction;
  selector: BulkSelector;
  /** What the selector means, in words ("fingerprint X", "3 selected letters"). */
  description: string;
}

interface Props extends BulkIntent {
  onClose: () => void;
}

/** A bulk requeue/discard: first a dry run shows what would be touched, then confirm. */
export function BulkPanel({ action, selector, description, onClose }: Props) {
  const client = useQueryClient();
  const heading = useRef<HTMLHeadingElement>(null);
  const [reason, setReason] = useState('');
  const [preview, setPreview] = useState<BulkResult | null>(null);
  const verb = BULK_VERBS[action];

  const dryRun = useMutation({
    mutationFn: () => bulkDeadLetters({ action, dryRun: true, selector }),
    onSuccess: setPreview,
  });
  const run = useMutation({
    mutationFn: () =>
      bulkDeadLetters({ action, dryRun: false, selector, ...(reason.trim() ? { reason: reason.trim() } : {}) }),
    onSuccess: (result) => {
      notify(`${verb}: ${result.count} dead letter(s) ${action === 'requeue' ? 'requeued' : 'discarded'}`);
      void client.invalidateQueries({ queryKey: queryKeys.deadLetters });
      void client.invalidateQueries({ queryKey: queryKeys.jobs });
      onClose();
    },
    onError: (error) => notify(`${verb} failed: ${errorMessage(error)}`, 'error'),
  });

  const { mutate: preview_ } = dryRun;
  useEffect(() => {
    heading.current?.focus();
    preview_();
  }, [preview_]);

  return (
    <section className="card" aria-labelledby="bulk-heading" data-testid="bulk-panel">
      <div className="page-header">
        <h2 id="bulk-heading" ref={heading} tabIndex={-1} style={{ marginTop: 0 }}>
          {verb} {description}
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      {dryRun.isPending ? <Loading label="Checking what would be touched (dry run)…" /> : null}
      {dryRun.isError ? <ErrorState error={dryRun.error} onRetry={() => dryRun.mutate()} /> : null}
      {preview ? (
        <>
          <p role="status" data-testid="bulk-preview">
            Dry run: {preview.count} of {preview.matching} matching open letter(s) would be{' '}
            {action === 'requeue' ? 'requeued (only those whose job is dead)' : 'discarded'}.
            {preview.count < preview.matching ? ' The rest exceed the bulk limit; repeat afterwards.' : ''}
          </p>
          {preview.sample.length > 0 ? (
            <TableRegion label="Letters the action would touch">
              <ListTable caption={`First ${preview.sample.length} of them`} columns={SAMPLE_COLUMNS} rows={preview.sample}>
                {(letter) => (
                  <tr key={letter.id}>
                    <td className="mono">{shortId(letter.jobId)}</td>
                    <td>{letter.jobType}</td>
                    <td>{letter.reason}</td>
                    <td className="truncate">{letter.lastError ?? '—'}</td>
                    <td className="nowrap">{formatDateTime(letter.createdAt)}</td>
                  </tr>
                )}
              </ListTable>
            </TableRegion>
          ) : null}
          <div className="field" style={{ marginTop: '0.75rem' }}>
            <label htmlFor="bulk-reason">Reason (optional, recorded in the audit log)</label>
            <input id="bulk-reason" value={reason} maxLength={1000} onChange={(e) => setReason(e.target.value)} />
          </div>
          <div className="toolbar">
            <button
              type="button"
              className={action === 'discard' ? 'danger' : 'primary'}
              disabled={preview.count === 0 || run.isPending}
              onClick={() => run.mutate()}
              data-testid="bulk-confirm"
            >
              {run.isPending ? 'Working…' : `${verb} ${preview.count} letter(s)`}
            </button>
            <button type="button" onClick={() => dryRun.mutate()} disabled={dryRun.isPending}>
              Check again
            </button>
          </div>
        </>
      ) : null}
    </section>
  );
}
