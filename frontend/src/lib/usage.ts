/**
 * A project's usage per UTC day (GET /api/usage): the ranges the Queues page offers, every day
 * of a range with the days without activity as zeros (the API lists only days with some), and
 * run time for people.
 */
import type { UsageDay } from '../api/types';

/** The ranges offered, in days ending today (UTC). */
export const USAGE_RANGES = [7, 30, 90] as const;
export type UsageRange = (typeof USAGE_RANGES)[number];
export const DEFAULT_USAGE_RANGE: UsageRange = 30;

const DAY_MS = 86_400_000;

/** `YYYY-MM-DD` of the UTC day `ms` falls in. */
function utcDay(ms: number): string {
  return new Date(ms).toISOString().slice(0, 10);
}

/** Milliseconds at the start of the UTC day `day` (`YYYY-MM-DD`); NaN when it is not one. */
function dayStart(day: string): number {
  return Date.parse(`${day}T00:00:00Z`);
}

/** The last `days` UTC days, today included: `{from, to}` as the API takes them. */
export function usageRange(days: number, now: number = Date.now()): { from: string; to: string } {
  return { from: utcDay(now - (days - 1) * DAY_MS), to: utcDay(now) };
}

/** One day of the chart and its table. */
export interface UsagePoint {
  day: string;
  submitted: number;
  attempts: number;
  runSeconds: number;
  succeeded: number;
  dead: number;
}

/**
 * Every day from `firstDay` to `lastDay` (UTC, both included), each with what `items` say of it
 * (summed when several projects are listed) or zeros.
 */
export function fillUsageDays(firstDay: string, lastDay: string, items: readonly UsageDay[]): UsagePoint[] {
  const start = dayStart(firstDay);
  const end = dayStart(lastDay);
  if (Number.isNaN(start) || Number.isNaN(end)) return [];
  const byDay = new Map<string, UsagePoint>();
  for (let ms = start; ms <= end; ms += DAY_MS) {
    const day = utcDay(ms);
    byDay.set(day, { day, submitted: 0, attempts: 0, runSeconds: 0, succeeded: 0, dead: 0 });
  }
  for (const item of items) {
    const point = byDay.get(item.day);
    if (!point) continue; // outside the range asked for
    point.submitted += item.submitted;
    point.attempts += item.attempts;
    point.runSeconds += item.runSeconds;
    point.succeeded += item.succeeded;
    point.dead += item.dead;
  }
  return [...byDay.values()];
}

const shortDay = new Intl.DateTimeFormat(undefined, { month: 'short', day: 'numeric', timeZone: 'UTC' });
const longDay = new Intl.DateTimeFormat(undefined, { dateStyle: 'medium', timeZone: 'UTC' });

/** "Dec 6": a chart axis' label of a UTC day. */
export function formatShortDay(day: string): string {
  const ms = dayStart(day);
  return Number.isNaN(ms) ? day : shortDay.format(ms);
}

/** "Dec 6, 2026": a UTC day in a table. */
export function formatDay(day: string): string {
  const ms = dayStart(day);
  return Number.isNaN(ms) ? day : longDay.format(ms);
}

/** Run time: "0 s", "4.2 s", "12 min 5 s", "3 h 20 min", "2 d 4 h". */
export function formatRunTime(seconds: number): string {
  if (!Number.isFinite(seconds) || seconds <= 0) return '0 s';
  if (seconds < 59.95) return `${Number(seconds.toFixed(1))} s`;
  const whole = Math.round(seconds);
  const minutes = Math.floor(whole / 60);
  if (minutes < 60) return `${minutes} min ${whole % 60} s`;
  const hours = Math.floor(minutes / 60);
  if (hours < 24) return `${hours} h ${minutes % 60} min`;
  return `${Math.floor(hours / 24)} d ${hours % 24} h`;
}
