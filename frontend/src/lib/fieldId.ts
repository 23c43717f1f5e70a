/** The DOM id of the control for an API field path (`payload.to` -> `field-payload-to`). */
export function fieldId(path: string): string {
  return `field-${path.replace(/[^A-Za-z0-9_-]/g, '-')}`;
}
