/** One key figure: a label over its value (inside a `<dl className="grid grid-stats">`). */
export function Stat({ label, value, testId }: { label: string; value: string; testId?: string }) {
  return (
    <div className="stat" data-testid={testId}>
      <dt>{label}</dt>
      <dd>{value}</dd>
    </div>
  );
}
