/**
 * The one way the benchmarks reduce a list of figures: the nearest-rank percentile, the smallest value with at
 * least p% of the values at or below it (the ceil(p/100 × n)-th in ascending order). It is always one of the
 * values measured, never an interpolation; p 100 is the largest. NaN for an empty list.
 */
export function percentile(values: readonly number[], p: number): number {
  if (values.length === 0) return Number.NaN;
  const sorted = [...values].sort((a, b) => a - b);
  return sorted[Math.max(0, Math.ceil((p / 100) * sorted.length) - 1)]!;
}

/** The nearest-rank 50th percentile: of an even count, the lower of the two middle values. */
export function median(values: readonly number[]): number {
  return percentile(values, 50);
}
