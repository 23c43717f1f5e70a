import { useMemo } from 'react';
import { listJobTypes } from '../api/endpoints';
import { queryKeys } from '../api/queryKeys';
import type { JobTypeInfo } from '../api/types';
import { useScopedQuery } from '../project/useScopedQuery';
import { defaultJobType, orderedTypes, typeFilterOptions } from './jobTypes';
import { planSchemaForm, type SchemaFormPlan } from './schemaFields';

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
 * What a form that makes jobs (submit, schedule) needs of its chosen `type` ('' for none yet):
 * the type list (`jobTypes`), the listed types in the order the select offers them (`types`),
 * the type the form shows (`type`: the chosen one, else `defaultJobType`), that type as listed
 * (`selected`) and the form of its payload schema (`plan`; null while the list loads or lacks
 * the type).
 */
export function useJobTypeForm(chosen: string) {
  const jobTypes = useJobTypes();
  const listed = jobTypes.data?.types;
  // the form of every listed type's schema: the default type is the first one sendable as is
  const plans = useMemo(
    () => new Map((listed ?? []).map((info) => [info.type, planSchemaForm(info.payloadSchema)] as const)),
    [listed],
  );
  const planOf = (info: JobTypeInfo): SchemaFormPlan => plans.get(info.type) ?? planSchemaForm(info.payloadSchema);
  const types = useMemo(() => orderedTypes(listed ?? []), [listed]);
  const type = chosen || defaultJobType(listed, planOf);
  const selected = listed?.find((t) => t.type === type);
  const plan = selected ? planOf(selected) : null;
  return { jobTypes, types, type, selected, plan };
}

/** The options of a list's type filter (`typeFilterOptions`), `current` its value. */
export function useTypeFilterOptions(current: string): string[] {
  const types = useJobTypes().data?.types;
  return useMemo(() => typeFilterOptions(types, current), [types, current]);
}
