import { keepPreviousData } from '@tanstack/react-query';
import { useState } from 'react';
import { deadLetterActions, deadLetterGroups, listDeadLetters, type DeadLetterParams } from '../../api/endpoints';
import { queryKeys } from '../../api/queryKeys';
import { TypeFilter } from '../../components/TypeFilter';
import { usePageTitle } from '../../lib/usePageTitle';
import { useTypeFilterOptions } from '../../lib/useJobTypes';
import { useSelection } from '../../lib/useSelection';
import { usePollWhileOffline } from '../../live/context';
import { Link } from '../../project/links';
import { useSearchParams } from '../../project/navigation';
import { useScopedQuery } from '../../project/useScopedQuery';
import { AuditTab } from './AuditTab';
import { BulkPanel, type BulkIntent } from './BulkPanel';
import { GroupsTab } from './GroupsTab';
import { LettersTab } from './LettersTab';

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

export function DeadLettersPage() {
  usePageTitle('Dead letters');
  const [search, setSearch] = useSearchParams();
  const tab: Tab = search.get('tab') === 'letters' || search.get('letter') ? 'letters' : search.get('tab') === 'audit' ? 'audit' : 'groups';
  const filters = readFilters(search);
  const typeOptions = useTypeFilterOptions(filters.jobType ?? '');
  const page = Number(search.get('page') ?? '1') || 1;
  const letterId = search.get('letter');
  const poll = usePollWhileOffline(10_000);
  const [bulk, setBulk] = useState<BulkIntent | null>(null);

  const setParams = (patch: Record<string, string | null>) => {
    const next = new URLSearchParams(search);
    for (const [key, value] of Object.entries(patch)) {
      if (value === null || value === '') next.delete(key);
      else next.set(key, value);
    }
    setSearch(next);
  };
  const listParams: DeadLetterParams = { ...filters, pageNumber: page, pageSize: 20 };
  const groups = useScopedQuery({
    queryKey: queryKeys.deadLetterGroups(filters),
    queryFn: ({ signal }) => deadLetterGroups(filters, signal),
    enabled: tab === 'groups',
    refetchInterval: poll,
  });
  const letters = useScopedQuery({
    queryKey: queryKeys.deadLetterList(listParams),
    queryFn: ({ signal }) => listDeadLetters(listParams, signal),
    enabled: tab === 'letters',
    placeholderData: keepPreviousData,
    refetchInterval: poll,
  });
  const actions = useScopedQuery({
    queryKey: queryKeys.deadLetterActions(page),
    queryFn: ({ signal }) => deadLetterActions({ pageNumber: page, pageSize: 20 }, signal),
    enabled: tab === 'audit',
    placeholderData: keepPreviousData,
    refetchInterval: poll,
  });
  const selection = useSelection(letters.data?.items ?? [], (letter) => letter.id);

  const setFilter = (patch: Record<string, string | null>) => {
    setParams({ ...patch, page: null });
    selection.clear();
    setBulk(null);
  };
  const setPage = (p: number) => setParams({ page: p === 1 ? null : String(p) });

  const tabLink = (target: Tab) => {
    const next = new URLSearchParams(search);
    next.delete('letter');
    next.delete('page');
    next.set('tab', target);
    return `/dead-letters?${next.toString()}`;
  };

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
            <TypeFilter
              id="dl-type"
              label="Job type"
              value={filters.jobType ?? ''}
              options={typeOptions}
              onChange={(jobType) => setFilter({ jobType })}
            />
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
            selection.clear();
          }}
        />
      ) : null}

      {tab === 'groups' ? <GroupsTab query={groups} filters={filters} onBulk={setBulk} /> : null}
      {tab === 'letters' ? (
        <LettersTab
          query={letters}
          selection={selection}
          page={page}
          onPage={setPage}
          letterId={letterId}
          onInspect={(letter) => setParams({ letter })}
          onBulk={setBulk}
        />
      ) : null}
      {tab === 'audit' ? <AuditTab query={actions} page={page} onPage={setPage} /> : null}
    </>
  );
}

