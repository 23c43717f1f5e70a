import type { ChartRange } from '../../api/types';
import { CHART_RANGES } from './chartRows';

interface Props {
  value: ChartRange;
  onChange: (range: ChartRange) => void;
  /** Tells two pickers on a page apart (the radio group's name). */
  name: string;
}

/** The charts' range as one radio group: arrow keys move between the ranges. */
export function RangePicker({ value, onChange, name }: Props) {
  return (
    <fieldset
      className="range-picker"
      data-testid="range-picker"
      style={{ border: 0, margin: 0, padding: 0, display: 'flex', flexWrap: 'wrap', gap: '0.75rem', alignItems: 'center' }}
    >
      <legend style={{ float: 'left', marginRight: '0.25rem', padding: 0 }}>Range</legend>
      {CHART_RANGES.map((range) => (
        <label key={range.value} style={{ display: 'inline-flex', gap: '0.25rem', alignItems: 'center', margin: 0 }}>
          <input
            type="radio"
            name={name}
            value={range.value}
            checked={value === range.value}
            onChange={() => onChange(range.value)}
          />
          {range.label}
        </label>
      ))}
    </fieldset>
  );
}
