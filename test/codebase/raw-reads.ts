import { projections } from '../../projections/index.ts';

/** The scan of test/codebase/read-model-queries.test.ts: where a source reads a read model by its names. */

const projectionNames = new Set(projections.map((projection) => projection.name));
const collectionNames = new Set(projections.flatMap((projection) => Object.keys(projection.collections)));
const quoted = (text: string): string | undefined => /^'([^']*)'$|^"([^"]*)"$/.exec(text)?.slice(1).find((s) => s !== undefined);

/** A reader call's first two arguments, however the call is laid out (type arguments, line breaks). */
const READER_CALL = /\.(get|getMany|find|findAll|findWithIds|findStrings|count)\b\s*(?:<(?:[^<>]|<(?:[^<>]|<[^<>]*>)*>)*>)?\(\s*([^,()]+?)\s*,\s*([^,()]+?)\s*[,)]/g;
/** A keyset list's or an outbox's definition that names its projection or collection itself rather than taking it from a queries module. */
const DEFINITION = /\b(projection|collection)\s*:\s*('[^']*'|"[^"]*")/g;

/**
 * Where a source names a read model's collection by itself: a reader call whose first argument is a
 * projection's name (a literal) or whose second is a collection's name (a literal, after a projection named by
 * a constant); a `projection:` or `collection:` that names one.
 */
export function rawReads(text: string): Array<{ line: number; text: string }> {
  const found: Array<{ index: number; text: string }> = [];
  for (const match of text.matchAll(READER_CALL)) {
    const projection = quoted(match[2]!);
    const collection = quoted(match[3]!);
    if ((projection !== undefined && projectionNames.has(projection)) || (collection !== undefined && collectionNames.has(collection) && projection === undefined)) {
      found.push({ index: match.index, text: match[0] });
    }
  }
  for (const match of text.matchAll(DEFINITION)) {
    const name = quoted(match[2]!)!;
    if (match[1] === 'projection' ? projectionNames.has(name) : collectionNames.has(name)) found.push({ index: match.index, text: match[0] });
  }
  return found.map(({ index, text: call }) => ({ line: text.slice(0, index).split('\n').length, text: call.replace(/\s+/g, ' ') }));
}
