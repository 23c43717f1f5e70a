import { useState, type SyntheticEvent } from 'react';
import { MAX_SEARCH_LENGTH } from '../../lib/jobFilters';
import { SEARCH_HINT, searchProblem } from './jobSearch';

/**
 * The jobs list's search: an id prefix or `payload.field = value`, applied on submit (the URL
 * holds it); a text the API would refuse is answered beside the box and not sent.
 */
export function JobSearchBox({ value, onSearch }: { value: string; onSearch: (search: string) => void }) {
  const [text, setText] = useState(value);
  const [problem, setProblem] = useState<string | null>(null);
  const submit = (event: SyntheticEvent) => {
    event.preventDefault();
    const found = searchProblem(text);
    setProblem(found);
    if (found === null) onSearch(text.trim());
  };
  return (
    <form role="search" aria-label="Search jobs" className="toolbar" onSubmit={submit} noValidate>
      <div className="field" style={{ flex: '1 1 24rem' }}>
        <label htmlFor="job-search">Search jobs</label>
        <input
          id="job-search"
          type="search"
          className="mono"
          value={text}
          maxLength={MAX_SEARCH_LENGTH}
          placeholder="3f2a9c1b or payload.to = a@example.com"
          aria-describedby={problem ? 'job-search-hint job-search-error' : 'job-search-hint'}
          aria-invalid={problem ? true : undefined}
          onChange={(e) => setText(e.target.value)}
        />
        <span id="job-search-hint" className="hint">
          {SEARCH_HINT}
        </span>
        {problem ? (
          <span id="job-search-error" className="field-error" role="alert">
            {problem}
          </span>
        ) : null}
      </div>
      <button type="submit">Search</button>
      {value ? (
        <button
          type="button"
          onClick={() => {
            setText('');
            setProblem(null);
            onSearch('');
          }}
        >
          Clear search
        </button>
      ) : null}
    </form>
  );
}
