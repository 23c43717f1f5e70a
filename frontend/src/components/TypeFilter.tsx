/**
 * A list's job type filter: "Any", then `options` (`useTypeFilterOptions`: the built-ins, the
 * custom types, the URL's type), each shown by `optionLabel`.
 */
export function TypeFilter({
  id,
  label,
  value,
  options,
  onChange,
  optionLabel = (type) => type,
}: {
  id: string;
  label: string;
  value: string;
  options: readonly string[];
  onChange: (type: string) => void;
  optionLabel?: (type: string) => string;
}) {
  return (
    <div className="field">
      <label htmlFor={id}>{label}</label>
      <select id={id} value={value} onChange={(e) => onChange(e.target.value)}>
        <option value="">Any</option>
        {options.map((type) => (
          <option key={type} value={type}>
            {optionLabel(type)}
          </option>
        ))}
      </select>
    </div>
  );
}
