/**
 * The read-model port's contract, in its two halves: what readers ask (read-model-queries.conformance.ts) and
 * what projectors and operators do to generations (read-model-admin.conformance.ts). Every adapter runs both
 * (see the *.test.ts files beside it).
 */
import type { ReadModelStore } from '../../src/read-models/read-model-store.ts';
import type { HarnessOrPending } from '../support/conformance.ts';
import { readModelAdminConformance } from './read-model-admin.conformance.ts';
import { readModelQueriesConformance } from './read-model-queries.conformance.ts';

export { articlesSchema, BULK_WRITES, coveredSchema, searchSchema } from './read-model-store.fixtures.ts';

export function readModelStoreConformance(title: string, harness: HarnessOrPending<ReadModelStore>): void {
  readModelQueriesConformance(title, harness);
  readModelAdminConformance(title, harness);
}
