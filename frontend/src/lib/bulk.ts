/** Run an action over many items, a few at a time; report which ones failed. */
export async function runAll<T>(
  items: readonly T[],
  action: (item: T) => Promise<unknown>,
  concurrency = 4,
): Promise<{ ok: T[]; failed: { item: T; error: unknown }[] }> {
  const ok: T[] = [];
  const failed: { item: T; error: unknown }[] = [];
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const item = items[next++] as T;
      try {
        await action(item);
        ok.push(item);
      } catch (error) {
        failed.push({ item, error });
      }
    }
  };
  await Promise.all(Array.from({ length: Math.min(concurrency, items.length) }, worker));
  return { ok, failed };
}
