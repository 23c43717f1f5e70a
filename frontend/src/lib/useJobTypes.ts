import { useMemo } from 'react';
import { listJobTypes } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';
import { isBuiltinType } from '../api/types';
import { useScopedQuery } from '../project/useScopedQuery';
import { typeFilterOptions } from './jobTypes';
import { planSchemaForm } from './schemaFields';

/**
 * The job types the platform knows (GET /api/job-types). No live event carries them: workers
 * announce their types every 30 s (a type loses a worker 90 s after its last announcement), so
 * with `poll` the list is read every 15 s, else when a page using it mounts or the window
 * regains focus.
 */
export function useJobTypes({ poll = false }: { poll?: boolean } = {}) {
  return useScopedQuery({
    queryKey: queryKeys.jobTypes,
    queryFn: ({ signal }) => listJobTypes(signal),
    staleTime: 15_000,
    refetchInterval: poll ? 15_000 : false,
  });
}

/**
 * What a form that makes jobs (submit, schedule) needs of its chosen `type`: the type list
 * (`jobTypes`), its custom types in the listed order, the chosen type as listed (`selected`)
 * and, for a custom type, the form of its payload schema (`plan`; null for a built-in, which
 * keeps its hand-written fields, and while the list loads or lacks the type).
 */
export function useJobTypeForm(type: string) {
  const jobTypes = useJobTypes();
  const types = jobTypes.data?.types;
  const customTypes = useMemo(() => (types ?? []).filter((t) => !isBuiltinType(t.type)), [types]);
  const selected = types?.find((t) => t.type === type);
  const plan = useMemo(
    () => (selected && !isBuiltinType(selected.type) ? planSchemaForm(selected.payloadSchema) : null),
    [selected],
  );
  return { jobTypes, customTypes, selected, plan };
}

/** The options of a list's type filter (`typeFilterOptions`), `current` its value. */
export function useTypeFilterOptions(current: string): string[] {
  const types = useJobTypes().data?.types;
  return useMemo(() => typeFilterOptions(types, current), [types, current]);
}
