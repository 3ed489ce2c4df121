/** One labelled series of a LatencyHistogram: observe() is a bucket search and three additions. */
export interface HistogramSeries {
  observe(seconds: number): void;
}

interface SeriesState {
  labels: Record<string, string>;
  /** Observations per bucket (not cumulative); the last slot is +Inf. */
  counts: Float64Array;
  sum: number;
  count: number;
}

/**
 * A Prometheus histogram for the request path, where prom-client's own Histogram costs about a microsecond
 * per observation (it hashes the label values each time): here a caller resolves its series once and
 * keeps it, and an observation is a search over the bounds and three additions. It is registered in a
 * prom-client Registry as a metric (name, help, type, get, reset), which renders it like any histogram.
 */
export class LatencyHistogram {
  readonly type = 'histogram';
  readonly aggregator = 'sum';
  readonly #bounds: readonly number[];
  readonly #series: SeriesState[] = [];

  constructor(
    readonly name: string,
    readonly help: string,
    bounds: readonly number[],
  ) {
    this.#bounds = [...bounds].sort((a, b) => a - b);
  }

  /** A new series with these labels; resolve it once per label set and keep it. */
  series(labels: Record<string, string>): HistogramSeries {
    const bounds = this.#bounds;
    const state: SeriesState = { labels, counts: new Float64Array(bounds.length + 1), sum: 0, count: 0 };
    this.#series.push(state);
    return {
      observe(seconds: number): void {
        let i = 0;
        while (i < bounds.length && seconds > bounds[i]!) i++;
        state.counts[i]! += 1;
        state.sum += seconds;
        state.count += 1;
      },
    };
  }

  /** prom-client's metric shape: _bucket (cumulative, `le`), _sum and _count per series. */
  get(): { name: string; help: string; type: string; aggregator: string; values: Array<{ metricName: string; labels: Record<string, string | number>; value: number }> } {
    const values = [];
    for (const s of this.#series) {
      let cumulative = 0;
      for (let i = 0; i <= this.#bounds.length; i++) {
        cumulative += s.counts[i]!;
        values.push({ metricName: `${this.name}_bucket`, labels: { ...s.labels, le: i < this.#bounds.length ? this.#bounds[i]! : '+Inf' }, value: cumulative });
      }
      values.push({ metricName: `${this.name}_sum`, labels: s.labels, value: s.sum });
      values.push({ metricName: `${this.name}_count`, labels: s.labels, value: s.count });
    }
    return { name: this.name, help: this.help, type: this.type, aggregator: this.aggregator, values };
  }

  reset(): void {
    for (const s of this.#series) {
      s.counts.fill(0);
      s.sum = 0;
      s.count = 0;
    }
  }
}
