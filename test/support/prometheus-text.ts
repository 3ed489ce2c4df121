import { expect } from 'chai';

/** One sample line of the Prometheus text format. */
export interface Sample {
  name: string;
  labels: Record<string, string>;
  value: number;
}

export interface Exposition {
  /** Family name -> type, from the # TYPE lines. */
  types: Map<string, string>;
  samples: Sample[];
}

const NAME = /^[a-zA-Z_:][a-zA-Z0-9_:]*$/;
const SAMPLE = /^([a-zA-Z_:][a-zA-Z0-9_:]*)(?:\{(.*)\})? (\S+)(?: -?\d+)?$/;
const LABEL = /^([a-zA-Z_][a-zA-Z0-9_]*)="((?:[^"\\\n]|\\[\\"n])*)"(?:,|$)/;
const TYPES = new Set(['counter', 'gauge', 'histogram', 'summary', 'untyped']);

/**
 * Parses and checks text in the Prometheus exposition format 0.0.4 (what Prometheus scrapes): every line
 * a comment, a HELP or TYPE line, or a sample with a valid name, well-escaped labels and a number; every
 * sample belonging to a family typed before it; histogram buckets cumulative, ending in +Inf equal to
 * _count. Fails the test at the first violation. (The npm parser of this format, parse-prometheus-text-
 * format, loses the labels of labelled histograms, which is all that is checked here.)
 */
export function parseExposition(text: string): Exposition {
  const types = new Map<string, string>();
  const samples: Sample[] = [];
  expect(text.endsWith('\n'), 'ends with a newline').to.equal(true);
  for (const line of text.slice(0, -1).split('\n')) {
    if (line === '') continue;
    if (line.startsWith('#')) {
      const [, keyword, name, rest] = /^# (HELP|TYPE) (\S+) ?(.*)$/.exec(line) ?? [];
      if (keyword === 'TYPE') {
        expect(name, line).to.match(NAME);
        expect(TYPES.has(rest!), line).to.equal(true);
        expect(types.has(name!), `${name} typed twice`).to.equal(false);
        types.set(name!, rest!);
      }
      continue;
    }
    const match = SAMPLE.exec(line);
    expect(match, `not a sample line: ${line}`).to.not.equal(null);
    const [, name, labelText = '', valueText] = match!;
    const labels: Record<string, string> = {};
    for (let rest = labelText; rest !== ''; ) {
      const label = LABEL.exec(rest);
      expect(label, `bad labels in: ${line}`).to.not.equal(null);
      labels[label![1]!] = label![2]!.replace(/\\n/g, '\n').replace(/\\"/g, '"').replace(/\\\\/g, '\\');
      rest = rest.slice(label![0].length);
    }
    // Values are read as Go's strconv.ParseFloat reads them (which Prometheus uses): NaN and Inf in any case.
    const special = /^([+-]?)(inf|infinity|nan)$/i.exec(valueText!);
    const value = special ? (special[2]!.toLowerCase() === 'nan' ? NaN : special[1] === '-' ? -Infinity : Infinity) : Number(valueText);
    expect(special !== null || (valueText !== '' && !Number.isNaN(value)), `not a number in: ${line}`).to.equal(true);
    const family = [name!, name!.replace(/_(bucket|sum|count)$/, '')].find((n) => types.has(n));
    expect(family, `${name} has no # TYPE line before it`).to.not.equal(undefined);
    samples.push({ name: name!, labels, value });
  }
  for (const [family, type] of types) {
    if (type !== 'histogram') continue;
    const series = new Map<string, Sample[]>();
    for (const sample of samples.filter((s) => s.name === `${family}_bucket`)) {
      const { le: _le, ...rest } = sample.labels;
      const key = JSON.stringify(rest);
      series.set(key, [...(series.get(key) ?? []), sample]);
    }
    for (const [key, buckets] of series) {
      const counts = buckets.map((b) => b.value);
      expect(counts, `${family}${key} buckets are cumulative`).to.deep.equal([...counts].sort((a, b) => a - b));
      expect(buckets.at(-1)!.labels['le'], `${family}${key} ends in +Inf`).to.equal('+Inf');
      const count = samples.find((s) => s.name === `${family}_count` && JSON.stringify(s.labels) === key);
      expect(count?.value, `${family}_count${key}`).to.equal(buckets.at(-1)!.value);
    }
  }
  return { types, samples };
}

/** The sum of the samples of `name` whose labels include `labels`. */
export function total(exposition: Exposition, name: string, labels: Record<string, string> = {}): number {
  return exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v)).reduce((sum, s) => sum + s.value, 0);
}

/** The samples of `name` whose labels include `labels`. */
export function series(exposition: Exposition, name: string, labels: Record<string, string> = {}): Sample[] {
  return exposition.samples.filter((s) => s.name === name && Object.entries(labels).every(([k, v]) => s.labels[k] === v));
}
