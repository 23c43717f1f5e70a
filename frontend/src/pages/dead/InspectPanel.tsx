import { useMutation, useQueryClient } from '@tanstack/react-query';
import { useEffect, useRef, useState } from 'react';
import { errorMessage, isApiError } from '../../api/client';
import { discardDeadLetter, requeueDeadLetter } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import type { DeadLetterItem, ErrorDetail, RequeueBody } from '../../api/types';
import { ConfirmAction } from '../../components/ConfirmAction';
import { Denied } from '../../components/Denied';
import { JsonBlock } from '../../components/JsonBlock';
import { JobLink } from '../../components/JobLink';
import { StatusBadge } from '../../components/StatusBadge';
import { snapshotPayload } from '../../lib/deadLetters';
import { formatDateTime, prettyJson, shortId } from '../../lib/format';
import { parsePayload } from '../../lib/json';
import { notify } from '../../lib/notices';
import { deniedReason, useRights } from '../../project/access';

export function InspectPanel({ letter, onClose }: { letter: DeadLetterItem; onClose: () => void }) {
  const client = useQueryClient();
  const heading = useRef<HTMLHeadingElement>(null);
  const [edit, setEdit] = useState(false);
  const [text, setText] = useState(() => prettyJson(snapshotPayload(letter)));
  const [reason, setReason] = useState('');
  const [jsonError, setJsonError] = useState<string | null>(null);
  const [apiDetails, setApiDetails] = useState<readonly ErrorDetail[]>([]);
  const open = letter.resolvedAt === null;
  const requeueable = open && letter.jobStatus === 'dead';
  // the letter's project decides: a viewer there may only look
  const rights = useRights(letter.projectId);

  useEffect(() => {
    heading.current?.focus();
  }, [letter.id]);

  const done = () => {
    void client.invalidateQueries({ queryKey: queryKeys.deadLetters });
    void client.invalidateQueries({ queryKey: queryKeys.jobs });
  };

  const requeue = useMutation({
    mutationFn: (body: RequeueBody) => requeueDeadLetter(letter.id, body),
    onSuccess: () => {
      notify(`Requeue of job ${shortId(letter.jobId)} requested`);
      done();
      onClose();
    },
    onError: (error) => {
      if (isApiError(error) && error.details.length > 0) setApiDetails(error.details);
      notify(`Requeue failed: ${errorMessage(error)}`, 'error');
    },
  });
  const discard = useMutation({
    mutationFn: () => discardDeadLetter(letter.id, reason.trim() || undefined),
    onSuccess: () => {
      notify('Dead letter discarded');
      done();
      onClose();
    },
    onError: (error) => notify(`Discard failed: ${errorMessage(error)}`, 'error'),
  });

  const submitRequeue = () => {
    setApiDetails([]);
    const body: RequeueBody = {};
    if (reason.trim()) body.reason = reason.trim();
    if (edit) {
      const parsed = parsePayload(text);
      if (!parsed.ok) {
        setJsonError(parsed.error);
        document.getElementById('requeue-payload')?.focus();
        return;
      }
      setJsonError(null);
      body.payload = parsed.value;
    }
    requeue.mutate(body);
  };

  return (
    <section className="card" aria-labelledby="inspect-heading" data-testid="dead-letter-inspect">
      <div className="page-header">
        <h2 id="inspect-heading" tabIndex={-1} ref={heading} style={{ marginTop: 0 }}>
          Dead letter of job{' '}
          <JobLink jobId={letter.jobId} />
        </h2>
        <button type="button" onClick={onClose}>
          Close
        </button>
      </div>
      <dl className="props">
        <dt>Job type</dt>
        <dd>{letter.jobType}</dd>
        <dt>Job status</dt>
        <dd>
          <StatusBadge status={letter.jobStatus} />
        </dd>
        <dt>Reason</dt>
        <dd>{letter.reason}</dd>
        <dt>Last error</dt>
        <dd className="danger-text">
          {letter.lastErrorClass ? `${letter.lastErrorClass}: ` : ''}
          {letter.lastError ?? '—'}
        </dd>
        <dt>Attempts</dt>
        <dd>{letter.attempt}</dd>
        <dt>Fingerprint</dt>
        <dd className="mono">{letter.fingerprint}</dd>
        <dt>Dead since</dt>
        <dd>{formatDateTime(letter.createdAt)}</dd>
        {letter.resolvedAt ? (
          <>
            <dt>Resolved</dt>
            <dd>
              {letter.resolution} {formatDateTime(letter.resolvedAt)} by {letter.resolvedBy}
            </dd>
          </>
        ) : null}
      </dl>
      <h3>Payload snapshot</h3>
      <JsonBlock value={letter.payloadSnapshot} label="Payload snapshot" />

      {open && !rights.act ? (
        <Denied testId="dead-letter-denied">{deniedReason(rights, 'act', 'requeueing or discarding its dead letters')}</Denied>
      ) : null}
      {open && rights.act ? (
        <div className="stack" style={{ marginTop: '1rem' }}>
          <div className="field">
            <label htmlFor="dead-letter-reason">Reason (optional, recorded in the audit log)</label>
            <input id="dead-letter-reason" value={reason} maxLength={1000} onChange={(e) => setReason(e.target.value)} />
          </div>
          {requeueable ? (
            <>
              <label className="check">
                <input type="checkbox" checked={edit} onChange={(e) => setEdit(e.target.checked)} />
                Requeue with an edited payload
              </label>
              {edit ? (
                <div className="field">
                  <label htmlFor="requeue-payload">Payload (JSON object)</label>
                  <span className="hint" id="requeue-payload-hint">
                    Validated against the {letter.jobType} schema before the job runs again.
                  </span>
                  <textarea
                    id="requeue-payload"
                    className="mono"
                    rows={10}
                    value={text}
                    onChange={(e) => {
                      setText(e.target.value);
                      setJsonError(null);
                    }}
                    aria-invalid={Boolean(jsonError) || apiDetails.length > 0}
                    aria-describedby={`requeue-payload-hint${jsonError || apiDetails.length > 0 ? ' requeue-payload-error' : ''}`}
                  />
                  {jsonError || apiDetails.length > 0 ? (
                    <div id="requeue-payload-error" className="field-error" role="alert" data-testid="requeue-payload-error">
                      {jsonError ?? apiDetails.map((d) => `${d.field}: ${d.message}`).join('; ')}
                    </div>
                  ) : null}
                </div>
              ) : null}
            </>
          ) : (
            <p className="muted">The job is {letter.jobStatus}, so it cannot be requeued; the letter can be discarded.</p>
          )}
          <div className="toolbar">
            {requeueable ? (
              <button type="button" className="primary" onClick={submitRequeue} disabled={requeue.isPending}>
                {requeue.isPending ? 'Requeueing…' : edit ? 'Requeue with this payload' : 'Requeue'}
              </button>
            ) : null}
            <ConfirmAction
              label="Discard"
              confirmLabel="Yes, discard"
              question="The job stays dead. Discard the letter?"
              onConfirm={() => discard.mutate()}
              busy={discard.isPending}
              testId="discard-letter"
            />
          </div>
        </div>
      ) : null}
    </section>
  );
}
