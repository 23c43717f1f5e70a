/**
 * Cron preview in the browser. The dashboard has no preview endpoint, so the next fire times
 * are computed here with cron-parser in the chosen IANA zone, with the server's rules for what
 * is valid: exactly 5 fields (minute hour day-of-month month day-of-week). Day-of-month and
 * day-of-week both restricted means either matches, as in croniter.
 *
 * Around daylight-saving changes the server (croniter) may differ from this preview: a skipped
 * wall-clock time fires there at the first instant after the gap, a repeated one fires twice.
 */
import { CronExpressionParser } from 'cron-parser';

export const CRON_FIELDS = 5;

export const CRON_PRESETS: readonly { label: string; cron: string }[] = [
  { label: 'Every 5 minutes', cron: '*/5 * * * *' },
  { label: 'Every hour, on the hour', cron: '0 * * * *' },
  { label: 'Every day at 03:00', cron: '0 3 * * *' },
  { label: 'Weekdays at 09:00', cron: '0 9 * * 1-5' },
  { label: 'Mondays at 08:30', cron: '30 8 * * 1' },
  { label: 'First day of the month at 00:00', cron: '0 0 1 * *' },
];

export function normalizeCron(expression: string): string {
  return expression.trim().split(/\s+/).join(' ');
}

export function isValidTimeZone(timeZone: string): boolean {
  if (!timeZone.trim()) return false;
  try {
    new Intl.DateTimeFormat('en-US', { timeZone }).format(0);
    return true;
  } catch {
    return false;
  }
}

/** Every IANA zone the browser knows (UTC first). */
export function timeZones(): string[] {
  // older browsers lack Intl.supportedValuesOf: offer UTC and the browser's own zone then
  const intl = Intl as unknown as { supportedValuesOf?: (key: string) => string[] };
  const zones = intl.supportedValuesOf ? intl.supportedValuesOf('timeZone') : [browserTimeZone()];
  return ['UTC', ...zones.filter((zone) => zone !== 'UTC')];
}

export function browserTimeZone(): string {
  return Intl.DateTimeFormat().resolvedOptions().timeZone || 'UTC';
}

/** An error message for an invalid expression, or null. */
export function cronError(expression: string): string | null {
  const fields = expression.trim().split(/\s+/).filter(Boolean);
  if (fields.length !== CRON_FIELDS) {
    return `Cron needs exactly ${CRON_FIELDS} fields (minute hour day month weekday), got ${fields.length}`;
  }
  try {
    CronExpressionParser.parse(fields.join(' '), { tz: 'UTC' });
    return null;
  } catch (error) {
    return `Invalid cron expression: ${error instanceof Error ? error.message : String(error)}`;
  }
}

/** The next `count` fire times strictly after `from`, computed in `timeZone`. */
export function nextFireTimes(
  expression: string,
  timeZone: string,
  count = 5,
  from: Date = new Date(),
): Date[] {
  const problem = cronError(expression);
  if (problem) throw new Error(problem);
  if (!isValidTimeZone(timeZone)) throw new Error(`Unknown time zone ${timeZone}`);
  const parsed = CronExpressionParser.parse(normalizeCron(expression), {
    currentDate: from,
    tz: timeZone,
  });
  return parsed.take(count).map((date) => date.toDate());
}
