import { expect } from 'chai';
import { masterRecordsProblems, masterValueSet, orderedRecords, recordLabel } from '../../../../src/domain/content/master/master-entity.ts';

const rec = (value: string, parent: string | null = null, order = 0) => ({ value, labels: { en: value }, order, parent });

describe('master records', () => {
  it('accept a proper tree', () => {
    expect(masterRecordsProblems([rec('a'), rec('b', 'a'), rec('c', 'b'), rec('d', 'a')])).to.deep.equal([]);
  });

  it('refuse a record that is its own parent', () => {
    expect(masterRecordsProblems([rec('a', 'a')]).map((p) => `${p.path}: ${p.message}`)).to.deep.equal(['records.a.parent: a record cannot be its own parent']);
  });

  it('refuse a parent that is no record', () => {
    expect(masterRecordsProblems([rec('a', 'ghost')]).map((p) => `${p.path}: ${p.message}`)).to.deep.equal(['records.a.parent: no record has the value "ghost"']);
  });

  it('refuse cycles, reporting each cycle once', () => {
    const problems = masterRecordsProblems([rec('a', 'c'), rec('b', 'a'), rec('c', 'b'), rec('x', 'y'), rec('y', 'x'), rec('z', 'a')]);
    expect(problems.map((p) => p.message)).to.deep.equal([
      'parents form a cycle: a → c → b → a; a record cannot be its own ancestor',
      'parents form a cycle: x → y → x; a record cannot be its own ancestor',
    ]);
  });

  it('refuse duplicate values', () => {
    const problems = masterRecordsProblems([rec('a'), rec('a')]);
    expect(problems.map((p) => `${p.path}: ${p.message}`)).to.deep.equal([
      'records[0].value: "a" is the value of more than one record; record values must be unique',
      'records[1].value: "a" is the value of more than one record; record values must be unique',
    ]);
  });

  it('order records depth-first, siblings by order then value', () => {
    const ordered = orderedRecords([rec('b', null, 1), rec('a2', 'a', 1), rec('a', null, 0), rec('a1', 'a', 0), rec('c', null, 1)]);
    expect(ordered.map((r) => r.value)).to.deep.equal(['a', 'a1', 'a2', 'b', 'c']);
  });

  it('resolve labels by locale with fallbacks', () => {
    const r = { value: 'news', labels: { en: 'News', ja: 'ニュース' } };
    expect(recordLabel(r, 'ja')).to.equal('ニュース');
    expect(recordLabel(r, 'fr', 'en')).to.equal('News');
    expect(recordLabel({ value: 'x', labels: {} }, 'fr')).to.equal('x');
    expect([...masterValueSet({ records: [rec('a'), rec('b')] })]).to.deep.equal(['a', 'b']);
  });
});
