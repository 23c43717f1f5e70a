import type { ReactNode } from 'react';

/** Where a control your role may not use would be: why it is not there (docs/tenancy.md, "Roles"). */
export function Denied({ children, testId = 'denied' }: { children: ReactNode; testId?: string }) {
  return (
    <p className="denied" role="note" data-testid={testId}>
      {children}
    </p>
  );
}
