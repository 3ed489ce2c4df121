/** Range conditions (RangeCondition in ./read-model-store.ts) as the adapters check and compile them. */
import { ReadModelError } from './read-model-store.ts';

/** The operators of a RangeCondition and the SQL comparison of each. */
export const RANGE_OPERATORS = { $gt: '>', $gte: '>=', $lt: '<', $lte: '<=' } as const;

/** The bounds of a range condition, checked: each operator known, at most one per side, each a string or a finite number (ReadModelError otherwise). */
export function rangeBounds(field: string, condition: object): Array<[keyof typeof RANGE_OPERATORS, string | number]> {
  const entries = Object.entries(condition).filter(([, operand]) => operand !== undefined);
  const invalid = (why: string) => new ReadModelError(`invalid condition on ${JSON.stringify(field)}: ${why}`);
  if (entries.length === 0 || entries.length > 2) throw invalid('expected one operator, or a lower and an upper bound');
  const sides = new Set<string>();
  for (const [operator, operand] of entries) {
    if (!(operator in RANGE_OPERATORS)) throw invalid(`unknown operator ${operator}: use $in, $ne, $gt, $gte, $lt or $lte`);
    if (!(typeof operand === 'string' || (typeof operand === 'number' && Number.isFinite(operand)))) throw invalid(`${operator} takes a string or a finite number`);
    const side = operator.startsWith('$g') ? 'lower' : 'upper';
    if (sides.has(side)) throw invalid(`two ${side} bounds`);
    sides.add(side);
  }
  return entries as Array<[keyof typeof RANGE_OPERATORS, string | number]>;
}
