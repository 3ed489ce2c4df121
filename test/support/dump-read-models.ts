import type { Projection } from '../../src/projection-engine/projection.ts';
import type { ReadModelStore } from '../../src/read-models/read-model-store.ts';

/** Every document of every projection's active generation, keyed and sorted, for comparing two runs. */
export async function dumpReadModels(store: ReadModelStore, projections: readonly Projection[]): Promise<Record<string, unknown>> {
  const dump: Record<string, unknown> = {};
  for (const projection of projections) {
    const generation = await store.activeGeneration(projection.name);
    if (generation === null) {
      dump[projection.name] = null;
      continue;
    }
    const target = { projection: projection.name, generation };
    const record = await store.getGeneration(projection.name, generation);
    const collections: Record<string, unknown[]> = {};
    for (const collection of Object.keys(projection.collections)) {
      const docs: unknown[] = [];
      for (let offset = 0; ; offset += 5000) {
        const page = await store.find(target, collection, { limit: 5000, offset });
        docs.push(...page);
        if (page.length < 5000) break;
      }
      collections[collection] = docs;
    }
    dump[projection.name] = { checkpoint: String(record?.checkpoint), collections };
  }
  return dump;
}
