import { useQuery } from '@tanstack/react-query';
import { listJobTypes } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';

/**
 * The job types the platform knows (GET /api/job-types). No live event carries them: workers
 * announce their types every 30 s (a type loses a worker 90 s after its last announcement), so
 * with `poll` the list is read every 15 s, else when a page using it mounts or the window
 * regains focus.
 */
export function useJobTypes({ poll = false }: { poll?: boolean } = {}) {
  return useQuery({
    queryKey: queryKeys.jobTypes,
    queryFn: ({ signal }) => listJobTypes(signal),
    staleTime: 15_000,
    refetchInterval: poll ? 15_000 : false,
  });
}
