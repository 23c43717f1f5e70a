import { keepPreviousData, useQuery } from '@tanstack/react-query';
import { useState } from 'react';
import { Link, useSearchParams } from 'react-router';
import { isApiError } from '../../api/client';
import { deadLetterActions, deadLetterGroups, getDeadLetter, listDeadLetters, type DeadLetterParams } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { type BulkAction, type BulkSelector, type DeadLetterItem } from '../../api/types';
import { Pagination } from '../../components/Pagination';
import { StatusBadge } from '../../components/StatusBadge';
import { Empty, ErrorState, Loading } from '../../components/states';
import { formatDateTime, shortId } from '../../lib/format';
import { usePageTitle } from '../../lib/usePageTitle';
import { useTypeFilterOptions } from '../../lib/useJobTypes';
import { usePollWhileOffline } from '../../live/context';
import { BulkPanel } from './BulkPanel';
import { InspectPanel } from './InspectPanel';
import { TableRegion } from '../../components/TableRegion';

type Tab = 'groups' | 'letters' | 'audit';

/** Reasons the scheduler records (services/scheduler/.../failures.py, adapters). */
const KNOWN_REASONS = [
  'max_attempts',
  'permanent_error',
  'lease_expired',
  'ttl_expired',
  'dependency_failed',
  'unprocessable',
  'poison',
];

interface BulkIntent {
  action: BulkAction;
  selector: BulkSelector;
  description: string;
}

function readFilters(search: URLSearchParams): DeadLetterParams {
  const status = search.get('status');
  const params: DeadLetterParams = {
    status: status === 'resolved' || status === 'all' ? status : 'open',
  };
  for (const key of ['reason', 'jobType', 'fingerprint'] as const) {
    const value = search.get(key);
    if (value) params[key] = value;
  }
  return params;
}

/** Find one letter: on the loaded page, else asked for by its id (a 404 means gone or not yours). */
function useLetter(id: string | null, page: DeadLetterItem[] | undefined) {
  const local = id ? page?.find((letter) => letter.id === id) : undefined;
  const remote = useQuery({
    queryKey: ['dead-letters', 'one', id],
    queryFn: async ({ signal }) => {
      try {
        return await getDeadLetter(id ?? '', signal);
      } catch (error) {
        if (isApiError(error) && error.status === 404) return null;
        throw error;
      }
    },
    enabled: Boolean(id) && !local && page !== undefined,
    retry: false,
  });
  return { letter: local ?? remote.data ?? null, loading: !local && remote.isPending && Boolean(id), missing: !local && remote.data === null };
}

export function DeadLettersPage() {
  usePageTitle('Dead letters');
  const [search, setSearch] = useSearchParams();
  const tab: Tab = search.get('tab') === 'letters' || search.get('letter') ? 'letters' : search.get('tab') === 'audit' ? 'audit' : 'groups';
  const filters = readFilters(search);
  const typeOptions = useTypeFilterOptions(filters.jobType ?? '');
  const page = Number(search.get('page') ?? '1') || 1;
  const letterId = search.get('letter');
  const poll = usePollWhileOffline(10_000);
  const [selected, setSelected] = useState<ReadonlySet<string>>(new Set());
  const [bulk, setBulk] = useState<BulkIntent | null>(null);

  const setParams = (patch: Record<string, string | null>) => {
    const next = new URLSearchParams(search);
    for (const [key, value] of Object.entries(patch)) {
      if (value === null || value === '') next.delete(key);
      else next.set(key, value);
    }
    setSearch(next);
  };
  const setFilter = (patch: Record<string, string | null>) => {
    setParams({ ...patch, page: null });
    setSelected(new Set());
    setBulk(null);
  };

  const listParams: DeadLetterParams = { ...filters, pageNumber: page, pageSize: 20 };
  const groups = useQuery({
    queryKey: queryKeys.deadLetterGroups(filters),
    queryFn: ({ signal }) => deadLetterGroups(filters, signal),
    enabled: tab === 'groups',
    refetchInterval: poll,
  });
  const letters = useQuery({
    queryKey: queryKeys.deadLetterList(listParams),
    queryFn: ({ signal }) => listDeadLetters(listParams, signal),
    enabled: tab === 'letters',
    placeholderData: keepPreviousData,
    refetchInterval: poll,
  });
  const actions = useQuery({
    queryKey: queryKeys.deadLetterActions(page),
    queryFn: ({ signal }) => deadLetterActions({ pageNumber: page, pageSize: 20 }, signal),
    enabled: tab === 'audit',
    placeholderData: keepPreviousData,
    refetchInterval: poll,
  });
  const inspected = useLetter(letterId, tab === 'letters' ? letters.data?.items : undefined);

  const tabLink = (target: Tab) => {
    const next = new URLSearchParams(search);
    next.delete('letter');
    next.delete('page');
    next.set('tab', target);
    return `/dead-letters?${next.toString()}`;
  };

  const items = letters.data?.items ?? [];
  const chosen = items.filter((letter) => selected.has(letter.id));

  return (
    <>
      <h1>Dead letters</h1>
      <nav className="tabs" aria-label="Dead letter views">
        <Link to={tabLink('groups')} aria-current={tab === 'groups' ? 'page' : undefined}>
          Grouped by error
        </Link>
        <Link to={tabLink('letters')} aria-current={tab === 'letters' ? 'page' : undefined}>
          All letters
        </Link>
        <Link to={tabLink('audit')} aria-current={tab === 'audit' ? 'page' : undefined}>
          Audit log
        </Link>
      </nav>

      {tab !== 'audit' ? (
        <section className="card" role="search" aria-label="Filter dead letters">
          <div className="field-row">
            <div className="field">
              <label htmlFor="dl-status">Letters</label>
              <select id="dl-status" value={filters.status} onChange={(e) => setFilter({ status: e.target.value === 'open' ? null : e.target.value })}>
                <option value="open">Open</option>
                <option value="resolved">Resolved</option>
                <option value="all">All</option>
              </select>
            </div>
            <div className="field">
              <label htmlFor="dl-type">Job type</label>
              <select id="dl-type" value={filters.jobType ?? ''} onChange={(e) => setFilter({ jobType: e.target.value })}>
                <option value="">Any</option>
                {typeOptions.map((type) => (
                  <option key={type} value={type}>
                    {type}
                  </option>
                ))}
              </select>
            </div>
            <div className="field">
              <label htmlFor="dl-reason">Reason</label>
              <input
                id="dl-reason"
                list="dl-reasons"
                defaultValue={filters.reason ?? ''}
                key={filters.reason ?? ''}
                onBlur={(e) => {
                  if (e.target.value.trim() !== (filters.reason ?? '')) setFilter({ reason: e.target.value.trim() });
                }}
                onKeyDown={(e) => {
                  if (e.key === 'Enter') setFilter({ reason: e.currentTarget.value.trim() });
                }}
              />
              <datalist id="dl-reasons">
                {KNOWN_REASONS.map((reason) => (
                  <option key={reason} value={reason} />
                ))}
              </datalist>
            </div>
          </div>
          {filters.fingerprint ? (
            <p>
              Fingerprint: <code>{filters.fingerprint}</code>{' '}
              <button type="button" className="link" onClick={() => setFilter({ fingerprint: null })}>
                Clear
              </button>
            </p>
          ) : null}
        </section>
      ) : null}

      {bulk ? (
        <BulkPanel
          key={JSON.stringify(bulk)}
          action={bulk.action}
          selector={bulk.selector}
          description={bulk.description}
          onClose={() => {
            setBulk(null);
            setSelected(new Set());
          }}
        />
      ) : null}

      {tab === 'groups' ? (
        <section aria-label="Groups">
          {groups.isPending ? <Loading label="Loading groups…" /> : null}
          {groups.isError ? <ErrorState error={groups.error} onRetry={() => void groups.refetch()} /> : null}
          {groups.data && groups.data.items.length === 0 ? <Empty>No dead letters here. Everything ran.</Empty> : null}
          {groups.data && groups.data.items.length > 0 ? (
            <TableRegion label="Dead-letter groups table">
              <table data-testid="dead-letter-groups">
                <thead>
                  <tr>
                    <th scope="col">Error fingerprint</th>
                    <th scope="col" className="num">Letters</th>
                    <th scope="col">Reasons</th>
                    <th scope="col">First / last</th>
                    <th scope="col">Actions</th>
                  </tr>
                </thead>
                <tbody>
                  {groups.data.items.map((group) => {
                    const selector: BulkSelector = { fingerprint: group.fingerprint };
                    if (filters.jobType) selector.jobType = filters.jobType;
                    if (filters.reason) selector.reason = filters.reason;
                    return (
                      <tr key={group.fingerprint}>
                        <td>
                          <code style={{ overflowWrap: 'anywhere' }}>{group.fingerprint}</code>
                          {group.sampleError ? <div className="muted">{group.sampleError}</div> : null}
                        </td>
                        <td className="num">{group.count}</td>
                        <td>{group.reasons.join(', ')}</td>
                        <td className="nowrap">
                          {formatDateTime(group.firstAt)}
                          <br />
                          {formatDateTime(group.lastAt)}
                        </td>
                        <td>
                          <div className="toolbar" style={{ margin: 0 }}>
                            <Link
                              to={`/dead-letters?${new URLSearchParams({ ...(filters.status !== 'open' ? { status: filters.status ?? '' } : {}), tab: 'letters', fingerprint: group.fingerprint }).toString()}`}
                            >
                              Show letters<span className="visually-hidden"> of {group.fingerprint}</span>
                            </Link>
                            {filters.status === 'open' ? (
                              <>
                                <button
                                  type="button"
                                  onClick={() => setBulk({ action: 'requeue', selector, description: `the group "${group.fingerprint}"` })}
                                >
                                  Requeue all<span className="visually-hidden"> {group.count} letters of {group.fingerprint}</span>…
                                </button>
                                <button
                                  type="button"
                                  onClick={() => setBulk({ action: 'discard', selector, description: `the group "${group.fingerprint}"` })}
                                >
                                  Discard all<span className="visually-hidden"> {group.count} letters of {group.fingerprint}</span>…
                                </button>
                              </>
                            ) : null}
                          </div>
                        </td>
                      </tr>
                    );
                  })}
                </tbody>
              </table>
            </TableRegion>
          ) : null}
        </section>
      ) : null}

      {tab === 'letters' ? (
        <section aria-label="Letters">
          {letterId ? (
            inspected.letter ? (
              <InspectPanel key={inspected.letter.id} letter={inspected.letter} onClose={() => setParams({ letter: null })} />
            ) : inspected.loading ? (
              <Loading label="Loading the dead letter…" />
            ) : inspected.missing ? (
              <Empty>
                That dead letter is not open (or not yours). <button type="button" className="link" onClick={() => setParams({ letter: null })}>Close</button>
              </Empty>
            ) : null
          ) : null}
          <div className="toolbar" role="region" aria-label="Bulk actions on selected letters">
            <span aria-live="polite">{chosen.length} selected</span>
            <button
              type="button"
              disabled={chosen.length === 0}
              onClick={() => setBulk({ action: 'requeue', selector: { ids: chosen.map((l) => l.id) }, description: `${chosen.length} selected letter(s)` })}
            >
              Requeue selected…
            </button>
            <button
              type="button"
              disabled={chosen.length === 0}
              onClick={() => setBulk({ action: 'discard', selector: { ids: chosen.map((l) => l.id) }, description: `${chosen.length} selected letter(s)` })}
            >
              Discard selected…
            </button>
          </div>
          {letters.isPending ? <Loading label="Loading dead letters…" /> : null}
          {letters.isError ? <ErrorState error={letters.error} onRetry={() => void letters.refetch()} /> : null}
          {letters.data && items.length === 0 ? <Empty>No dead letters match.</Empty> : null}
          {items.length > 0 ? (
            <TableRegion label="Dead letters table">
              <table data-testid="dead-letters-table">
                <thead>
                  <tr>
                    <th scope="col">
                      <input
                        type="checkbox"
                        aria-label="Select all letters on this page"
                        checked={items.length > 0 && items.every((l) => selected.has(l.id))}
                        onChange={(e) => setSelected(e.target.checked ? new Set(items.map((l) => l.id)) : new Set())}
                      />
                    </th>
                    <th scope="col">Job</th>
                    <th scope="col">Type</th>
                    <th scope="col">Reason</th>
                    <th scope="col">Last error</th>
                    <th scope="col">Dead since</th>
                    <th scope="col">State</th>
                    <th scope="col">
                      <span className="visually-hidden">Inspect</span>
                    </th>
                  </tr>
                </thead>
                <tbody>
                  {items.map((letter) => (
                    <tr key={letter.id} data-testid="dead-letter-row" data-job-id={letter.jobId} data-selected={selected.has(letter.id)}>
                      <td>
                        <input
                          type="checkbox"
                          aria-label={`Select dead letter of job ${shortId(letter.jobId)}`}
                          checked={selected.has(letter.id)}
                          onChange={(e) => {
                            const next = new Set(selected);
                            if (e.target.checked) next.add(letter.id);
                            else next.delete(letter.id);
                            setSelected(next);
                          }}
                        />
                      </td>
                      <td>
                        <Link to={`/jobs/${letter.jobId}`} className="mono">
                          {shortId(letter.jobId)}
                        </Link>
                      </td>
                      <td>{letter.jobType}</td>
                      <td>{letter.reason}</td>
                      <td className="truncate" title={letter.lastError ?? undefined}>
                        {letter.lastError ?? '—'}
                      </td>
                      <td className="nowrap">{formatDateTime(letter.createdAt)}</td>
                      <td>
                        {letter.resolvedAt ? (
                          <StatusBadge status="cancelled" label={letter.resolution ?? 'resolved'} />
                        ) : (
                          <StatusBadge status="dead" label="open" />
                        )}
                      </td>
                      <td>
                        <button
                          type="button"
                          onClick={() => setParams({ letter: letter.id })}
                          aria-label={`Inspect dead letter of job ${shortId(letter.jobId)}`}
                        >
                          Inspect
                        </button>
                      </td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableRegion>
          ) : null}
          {letters.data ? (
            <Pagination
              page={page}
              totalPages={letters.data.totalPages}
              totalItems={letters.data.totalItems}
              onPage={(p) => setParams({ page: p === 1 ? null : String(p) })}
              label="Dead letter pages"
            />
          ) : null}
        </section>
      ) : null}

      {tab === 'audit' ? (
        <section aria-label="Audit log">
          {actions.isPending ? <Loading label="Loading the audit log…" /> : null}
          {actions.isError ? <ErrorState error={actions.error} onRetry={() => void actions.refetch()} /> : null}
          {actions.data && actions.data.items.length === 0 ? <Empty>No requeues or discards yet.</Empty> : null}
          {actions.data && actions.data.items.length > 0 ? (
            <TableRegion label="Audit log table">
              <table data-testid="dead-letter-audit">
                <thead>
                  <tr>
                    <th scope="col">When</th>
                    <th scope="col">Action</th>
                    <th scope="col">By</th>
                    <th scope="col">Job</th>
                    <th scope="col" className="num">Affected</th>
                    <th scope="col">Selector</th>
                    <th scope="col">Reason</th>
                  </tr>
                </thead>
                <tbody>
                  {actions.data.items.map((action) => (
                    <tr key={action.id}>
                      <td className="nowrap">{formatDateTime(action.at)}</td>
                      <td>{action.action}</td>
                      <td>{action.actor}</td>
                      <td>
                        {action.jobId ? (
                          <Link to={`/jobs/${action.jobId}`} className="mono">
                            {shortId(action.jobId)}
                          </Link>
                        ) : (
                          '—'
                        )}
                      </td>
                      <td className="num">{action.affected}</td>
                      <td>{action.selector ? <code>{JSON.stringify(action.selector)}</code> : '—'}</td>
                      <td>{action.reason ?? '—'}</td>
                    </tr>
                  ))}
                </tbody>
              </table>
            </TableRegion>
          ) : null}
          {actions.data ? (
            <Pagination
              page={page}
              totalPages={actions.data.totalPages}
              totalItems={actions.data.totalItems}
              onPage={(p) => setParams({ page: p === 1 ? null : String(p) })}
              label="Audit log pages"
            />
          ) : null}
        </section>
      ) : null}
    </>
  );
}

