import { keepPreviousData, useMutation, useQuery, useQueryClient } from '@tanstack/react-query';
import { useRef, useState, type SyntheticEvent } from 'react';
import { useParams } from 'react-router';
import { errorMessage, isApiError } from '../../api/client';
import { createApiKey, getProject, listApiKeys, revokeApiKey } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { API_KEY_ROLES, type ApiKeyCreated, type ApiKeyOut, type ApiKeyRole } from '../../api/types';
import { ConfirmAction } from '../../components/ConfirmAction';
import { ErrorSummary } from '../../components/ErrorSummary';
import { Field, InputField } from '../../components/Field';
import type { Column } from '../../components/ListTable';
import { QueryTable } from '../../components/QueryList';
import { ErrorState } from '../../components/states';
import { formatDateTime } from '../../lib/format';
import { notify } from '../../lib/notices';
import { endOfDayIso, maskedKey, ROLE_LABELS, todayInput } from '../../lib/tenancy';
import { useApiForm } from '../../lib/useApiForm';
import { usePageTitle } from '../../lib/usePageTitle';
import { Link } from '../../project/links';

const PAGE_SIZE = 25;
const LABELS: Record<string, string> = { 'key.name': 'Name', 'key.role': 'Role', 'key.expiresAt': 'Expires on' };

function keyState(key: ApiKeyOut, now: number): 'revoked' | 'expired' | 'active' {
  if (key.revokedAt) return 'revoked';
  if (key.expiresAt && new Date(key.expiresAt).getTime() <= now) return 'expired';
  return 'active';
}

/** The new key, shown this once: a read-only field, a Copy button and the warning. */
function CreatedKey({ created, onDone }: { created: ApiKeyCreated; onDone: () => void }) {
  const input = useRef<HTMLInputElement>(null);
  const copy = async () => {
    input.current?.select();
    try {
      await navigator.clipboard.writeText(created.key);
      notify('API key copied');
    } catch {
      notify('Could not copy: select the key and copy it yourself', 'error');
    }
  };
  return (
    <section className="card card-warn" aria-labelledby="created-key-heading" data-testid="created-key">
      <h2 id="created-key-heading" style={{ marginTop: 0 }}>
        API key "{created.name}" created
      </h2>
      <p role="alert" data-testid="created-key-warning">
        <strong>Copy this key now: it will not be shown again.</strong> The platform keeps only its
        prefix, so nobody can show it to you later. If you lose it, revoke it and create another.
      </p>
      <div className="field">
        <label htmlFor="created-key-value">New API key</label>
        <input
          id="created-key-value"
          ref={input}
          className="mono"
          readOnly
          value={created.key}
          onFocus={(e) => e.target.select()}
          autoComplete="off"
          spellCheck={false}
        />
      </div>
      <div className="toolbar">
        <button type="button" className="primary" onClick={() => void copy()}>
          Copy
        </button>
        <button type="button" onClick={onDone}>
          I have stored it
        </button>
      </div>
    </section>
  );
}

function CreateKeyForm({ projectId, onCreated }: { projectId: string; onCreated: (key: ApiKeyCreated) => void }) {
  const client = useQueryClient();
  const [name, setName] = useState('');
  const [role, setRole] = useState<ApiKeyRole>('member');
  const [expires, setExpires] = useState('');
  const { errors, message, attempt, busy, run } = useApiForm('key');

  const submit = async (event: SyntheticEvent) => {
    event.preventDefault();
    const found: Record<string, string> = {};
    if (!name.trim()) found['key.name'] = 'Required';
    const expiresAt = expires ? endOfDayIso(expires) : null;
    if (expires && (!expiresAt || new Date(expiresAt).getTime() <= Date.now())) {
      found['key.expiresAt'] = 'Choose a day from today on';
    }
    await run(found, async () => {
      const created = await createApiKey(projectId, { name: name.trim(), role, ...(expiresAt ? { expiresAt } : {}) });
      setName('');
      setExpires('');
      void client.invalidateQueries({ queryKey: queryKeys.apiKeys(projectId) });
      onCreated(created);
    });
  };

  return (
    <form onSubmit={(e) => void submit(e)} noValidate aria-label="Create an API key" data-testid="create-key-form">
      <ErrorSummary errors={errors} labels={LABELS} message={message} focusKey={attempt} title="The API key was not created" />
      <div className="field-row">
        <InputField
          path="key.name"
          label="Name"
          hint="What uses it, e.g. CI"
          error={errors['key.name']}
          value={name}
          maxLength={200}
          onChange={setName}
        />
        <Field path="key.role" label="Role" hint="Member: submits and acts on jobs; viewer: reads" error={errors['key.role']}>
          {(p) => (
            <select {...p} value={role} onChange={(e) => setRole(e.target.value as ApiKeyRole)}>
              {API_KEY_ROLES.map((r) => (
                <option key={r} value={r}>
                  {ROLE_LABELS[r]}
                </option>
              ))}
            </select>
          )}
        </Field>
        <InputField
          path="key.expiresAt"
          label="Expires on (optional)"
          hint="It stops working at the end of this day (your time); empty: never"
          type="date"
          min={todayInput()}
          error={errors['key.expiresAt']}
          value={expires}
          onChange={setExpires}
        />
      </div>
      <button type="submit" className="primary" disabled={busy}>
        {busy ? 'Creating…' : 'Create API key'}
      </button>
    </form>
  );
}

function KeyRow({ projectId, apiKey, now }: { projectId: string; apiKey: ApiKeyOut; now: number }) {
  const client = useQueryClient();
  const revoke = useMutation({
    mutationFn: () => revokeApiKey(projectId, apiKey.id),
    onSuccess: () => {
      notify(`API key "${apiKey.name}" revoked`);
      void client.invalidateQueries({ queryKey: queryKeys.apiKeys(projectId) });
    },
    onError: (error) => notify(`Failed: ${errorMessage(error)}`, 'error'),
  });
  const state = keyState(apiKey, now);
  return (
    <tr data-testid="key-row" data-key-name={apiKey.name} data-state={state}>
      <th scope="row">{apiKey.name}</th>
      <td>{ROLE_LABELS[apiKey.role]}</td>
      <td>
        <code>{maskedKey(apiKey.prefix)}</code>
      </td>
      <td>
        {apiKey.createdBy}
        <div className="muted nowrap">{formatDateTime(apiKey.createdAt)}</div>
      </td>
      <td className="nowrap">{apiKey.expiresAt ? formatDateTime(apiKey.expiresAt) : 'Never'}</td>
      <td className="nowrap">{apiKey.lastUsedAt ? formatDateTime(apiKey.lastUsedAt) : 'Never'}</td>
      <td>
        {apiKey.revokedAt ? (
          <>
            <span className="badge badge-dead">Revoked</span>
            <div className="muted nowrap">{formatDateTime(apiKey.revokedAt)}</div>
            {apiKey.revokedBy ? <div className="muted">by {apiKey.revokedBy}</div> : null}
          </>
        ) : state === 'expired' ? (
          <span className="badge badge-cancelled">Expired</span>
        ) : (
          <span className="badge badge-active">Active</span>
        )}
      </td>
      <td>
        {state === 'active' ? (
          <ConfirmAction
            label="Revoke"
            confirmLabel="Yes, revoke"
            question={`Revoke "${apiKey.name}"? Programs using it are refused from their next request on.`}
            onConfirm={() => revoke.mutate()}
            busy={revoke.isPending}
            testId={`revoke-key-${apiKey.name}`}
          />
        ) : null}
      </td>
    </tr>
  );
}

const COLUMNS: readonly Column[] = [
  { label: 'Name' },
  { label: 'Role' },
  { label: 'Key' },
  { label: 'Created by' },
  { label: 'Expires' },
  { label: 'Last used' },
  { label: 'Revoked' },
  { label: 'Actions' },
];

export function ApiKeysPage() {
  const { projectId = '' } = useParams();
  const [page, setPage] = useState(1);
  // the new key lives in this page's state only: never in the query cache, gone once the page is left
  const [created, setCreated] = useState<ApiKeyCreated | null>(null);
  const project = useQuery({
    queryKey: queryKeys.project(projectId),
    queryFn: ({ signal }) => getProject(projectId, signal),
  });
  const keys = useQuery({
    queryKey: queryKeys.apiKeyList(projectId, page),
    queryFn: ({ signal }) => listApiKeys(projectId, { pageNumber: page, pageSize: PAGE_SIZE }, signal),
    placeholderData: keepPreviousData,
  });
  const title = project.data ? `API keys of ${project.data.name}` : 'API keys';
  usePageTitle(title);
  const forbidden = keys.isError && isApiError(keys.error) && keys.error.status === 403;
  const [now] = useState(() => Date.now());
  return (
    <>
      <h1>{title}</h1>
      {project.data ? (
        <p>
          <Link to={`/organizations/${project.data.orgId}`}>Back to the project's organization</Link>
        </p>
      ) : (
        <p>
          <Link to="/organizations">All organizations</Link>
        </p>
      )}
      {forbidden ? (
        <ErrorState error={keys.error} title="You may not manage this project's API keys" />
      ) : (
        <>
          {created ? <CreatedKey created={created} onDone={() => setCreated(null)} /> : null}
          <section className="card" aria-labelledby="keys-heading">
            <h2 id="keys-heading" style={{ marginTop: 0 }}>
              Keys
            </h2>
            <QueryTable
              query={keys}
              loadingLabel="Loading API keys…"
              empty="No API keys yet. Create one below."
              tableLabel="API keys table"
              pagination={{ page, onPage: setPage, label: 'API key pages' }}
              testId="keys-table"
              columns={COLUMNS}
            >
              {(apiKey) => <KeyRow key={apiKey.id} projectId={projectId} apiKey={apiKey} now={now} />}
            </QueryTable>
          </section>
          {keys.isSuccess ? (
            <section className="card" aria-labelledby="create-key-heading">
              <h2 id="create-key-heading" style={{ marginTop: 0 }}>
                Create an API key
              </h2>
              <p className="muted">
                A program calls with it in <code>X-API-Key</code>, as this project, with the key's role.
              </p>
              <CreateKeyForm projectId={projectId} onCreated={setCreated} />
            </section>
          ) : null}
        </>
      )}
    </>
  );
}
