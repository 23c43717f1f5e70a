import { useQuery } from '@tanstack/react-query';
import { demoAccounts } from '../../api/endpoints';

/** The demo logins of a development gateway, each a button that fills the form in. Nothing
 * anywhere else: the gateway answers 404 outside development (docs/tenancy.md, "Demo data"). */
export function DemoAccounts({ onPick }: { onPick: (email: string, password: string) => void }) {
  const accounts = useQuery({
    queryKey: ['demo-accounts'],
    queryFn: ({ signal }) => demoAccounts(signal),
    retry: false,
    staleTime: Infinity,
  });
  if (!accounts.data || accounts.data.accounts.length === 0) return null;
  return (
    <section aria-labelledby="demo-accounts" className="demo-accounts">
      <h2 id="demo-accounts">Demo accounts (development only)</h2>
      <ul>
        {accounts.data.accounts.map((account) => (
          <li key={account.email}>
            <button type="button" className="link" onClick={() => onPick(account.email, account.password)}>
              {account.email}
            </button>{' '}
            <span className="muted">
              {account.description} (password <code>{account.password}</code>)
            </span>
          </li>
        ))}
      </ul>
    </section>
  );
}
