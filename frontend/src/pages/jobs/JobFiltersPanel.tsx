import { useState, type SyntheticEvent } from 'react';
import { JOB_STATUSES, type JobStatus } from '../../api/types';
import { InputField } from '../../components/Field';
import { PriorityOptions } from '../../components/PriorityOptions';
import { TypeFilter } from '../../components/TypeFilter';
import { isoToLocalInput, localInputToIso } from '../../lib/format';
import { idPrefixProblem } from '../../lib/idPrefix';
import { PAGE_SIZES, type JobFilters } from '../../lib/jobFilters';
import { useFiltersOpen } from './filtersOpen';

/** A `datetime-local` input of a filter that holds an ISO instant ('' for none). */
function DateTimeFilter({ id, label, value, onChange }: { id: string; label: string; value: string; onChange: (iso: string) => void }) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <input
        id={id}
        type="datetime-local"
        value={isoToLocalInput(value)}
        onChange={(e) => onChange(localInputToIso(e.target.value) ?? '')}
      />
    </div>
  );
}

function TextFilters({
  filters,
  isAdmin,
  onApply,
}: {
  filters: JobFilters;
  isAdmin: boolean;
  onApply: (patch: Partial<JobFilters>) => void;
}) {
  const [batchId, setBatchId] = useState(filters.batchId);
  const [scheduleId, setScheduleId] = useState(filters.scheduleId);
  const [submittedBy, setSubmittedBy] = useState(filters.submittedBy);
  const [problems, setProblems] = useState<{ batchId?: string; scheduleId?: string }>({});
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    // As the API checks them: a short id as shown (8 characters) or a whole one, never ignored.
    const found = { batchId: idPrefixProblem(batchId) ?? undefined, scheduleId: idPrefixProblem(scheduleId) ?? undefined };
    setProblems(found);
    if (found.batchId || found.scheduleId) return;
    onApply({ batchId: batchId.trim(), scheduleId: scheduleId.trim(), submittedBy: submittedBy.trim() });
  };
  return (
    <form onSubmit={submit} className="field-row" aria-label="Filter by id" noValidate>
      <InputField
        path="batchId"
        label="Batch id"
        error={problems.batchId}
        value={batchId}
        onChange={setBatchId}
        className="mono"
        autoComplete="off"
        spellCheck={false}
        maxLength={64}
      />
      <InputField
        path="scheduleId"
        label="Schedule id"
        error={problems.scheduleId}
        value={scheduleId}
        onChange={setScheduleId}
        className="mono"
        autoComplete="off"
        spellCheck={false}
        maxLength={64}
      />
      {isAdmin ? (
        <div className="field">
          <label htmlFor="filter-owner">Submitted by</label>
          <input id="filter-owner" type="email" value={submittedBy} onChange={(e) => setSubmittedBy(e.target.value)} />
        </div>
      ) : null}
      <div className="field" style={{ justifyContent: 'flex-end' }}>
        <button type="submit">Apply ids</button>
      </div>
    </form>
  );
}

/**
 * The jobs list's filters: status, type, priority, created range, ids, page size; collapsible
 * (the heading's button), the choice remembered per tab.
 */
export function JobFiltersPanel({
  filters,
  filterCount,
  isAdmin,
  typeOptions,
  onUpdate,
  onClear,
}: {
  filters: JobFilters;
  filterCount: number;
  isAdmin: boolean;
  typeOptions: readonly string[];
  onUpdate: (patch: Partial<JobFilters>) => void;
  onClear: () => void;
}) {
  const [open, setOpen] = useFiltersOpen();
  const toggleStatus = (status: JobStatus, on: boolean) =>
    onUpdate({ status: on ? [...filters.status, status] : filters.status.filter((s) => s !== status) });
  return (
    <section className="card" aria-labelledby="filters-heading" role="search">
      <h2 id="filters-heading" style={{ marginTop: 0 }}>
        <button
          type="button"
          className="link"
          aria-expanded={open}
          aria-controls="filters-body"
          onClick={() => setOpen(!open)}
        >
          <span aria-hidden="true">{open ? '▾ ' : '▸ '}</span>
          Filters
        </button>{' '}
        {filterCount > 0 ? <span className="muted">({filterCount} active)</span> : null}
      </h2>
      <div id="filters-body" hidden={!open}>
        <fieldset>
          <legend>Status</legend>
          <div className="radio-row">
            {JOB_STATUSES.map((status) => (
              <label key={status} className="check">
                <input
                  type="checkbox"
                  name="status"
                  value={status}
                  checked={filters.status.includes(status)}
                  onChange={(e) => toggleStatus(status, e.target.checked)}
                />
                {status}
              </label>
            ))}
          </div>
        </fieldset>
        <div className="field-row">
          <TypeFilter id="filter-type" label="Type" value={filters.type} options={typeOptions} onChange={(type) => onUpdate({ type })} />
          <div className="field">
            <label htmlFor="filter-priority">Priority</label>
            <select id="filter-priority" value={filters.priority} onChange={(e) => onUpdate({ priority: e.target.value })}>
              <option value="">Any</option>
              <PriorityOptions descending />
            </select>
          </div>
          <DateTimeFilter
            id="filter-from"
            label="Created from"
            value={filters.createdFrom}
            onChange={(createdFrom) => onUpdate({ createdFrom })}
          />
          <DateTimeFilter id="filter-to" label="Created before" value={filters.createdTo} onChange={(createdTo) => onUpdate({ createdTo })} />
        </div>
        <TextFilters
          key={`${filters.batchId}|${filters.scheduleId}|${filters.submittedBy}`}
          filters={filters}
          isAdmin={isAdmin}
          onApply={onUpdate}
        />
      </div>
      <div className="toolbar">
        <button type="button" onClick={onClear} disabled={filterCount === 0}>
          Clear filters
        </button>
        <label htmlFor="page-size">Rows per page</label>
        <select id="page-size" value={filters.pageSize} onChange={(e) => onUpdate({ pageSize: Number(e.target.value) })}>
          {PAGE_SIZES.map((size) => (
            <option key={size} value={size}>
              {size}
            </option>
          ))}
        </select>
      </div>
    </section>
  );
}
