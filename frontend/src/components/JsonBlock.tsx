import { prettyJson } from '../lib/format';

export function JsonBlock({ value, label }: { value: unknown; label: string }) {
  return (
    <pre className="json" aria-label={label} tabIndex={0}>
      {prettyJson(value)}
    </pre>
  );
}
