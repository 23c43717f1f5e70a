import { QueryClient } from '@tanstack/react-query';
import { isApiError } from './api/client';

export function createQueryClient(): QueryClient {
  return new QueryClient({
    defaultOptions: {
      queries: {
        staleTime: 5_000,
        // client errors (404, 422, ...) do not get better by asking again
        retry: (count, error) =>
          count < 2 && (!isApiError(error) || error.status === 0 || error.status >= 500 || error.status === 429),
      },
      mutations: { retry: false },
    },
  });
}
