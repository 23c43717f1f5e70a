import { usePageTitle } from '../../lib/usePageTitle';
import { Link } from '../../project/links';

export function NotFoundPage() {
  usePageTitle('Not found');
  return (
    <>
      <h1>Page not found</h1>
      <p>
        There is nothing here. <Link to="/">Go to the overview</Link>.
      </p>
    </>
  );
}
