import { expect } from 'chai';
import { DomainError } from '../../../../src/domain/domain-error.ts';
import { copySlug, SLUG_MAX_LENGTH, slugProblem, validateSlug } from '../../../../src/domain/content/entry/slug.ts';

describe('entry slug rules', () => {
  for (const slug of ['a', '1', 'hello-world', '2026-11-22-release', 'a-b-c-1-2-3', 'x'.repeat(SLUG_MAX_LENGTH)]) {
    it(`accepts ${slug.length > 30 ? `${slug.length} characters` : JSON.stringify(slug)}`, () => {
      expect(slugProblem(slug)).to.equal(null);
      expect(() => validateSlug(slug)).not.to.throw();
    });
  }

  const refused: Array<[string, RegExp]> = [
    ['', /must not be empty/],
    ['x'.repeat(SLUG_MAX_LENGTH + 1), /at most 200 characters \(it has 201\)/],
    ['Hello', /only lowercase letters a-z, digits 0-9 and hyphens; found upper-case "H"/],
    ['hello world', /found " "/],
    ['hello_world', /found "_"/],
    ['hello.json', /found "\."/],
    ['café', /found "é"/],
    ['hello/world', /found "\/"/],
    ['-hello', /must not start or end with a hyphen/],
    ['hello-', /must not start or end with a hyphen/],
    ['-', /must not start or end with a hyphen/],
    ['hello--world', /two hyphens in a row/],
  ];
  for (const [slug, rule] of refused) {
    it(`refuses ${slug.length > 30 ? `${slug.length} characters` : JSON.stringify(slug)} naming the rule`, () => {
      let caught: unknown;
      try {
        validateSlug(slug);
      } catch (error) {
        caught = error;
      }
      expect(caught).to.be.instanceOf(DomainError);
      expect((caught as DomainError).code).to.equal('VALIDATION_ERROR');
      expect((caught as DomainError).message).to.match(rule);
      expect((caught as DomainError).message).to.match(/^slug /);
    });
  }

  it('refuses a non-string', () => {
    expect(slugProblem(42)).to.equal('slug must be a string');
  });

  it('names copies {slug}-copy, {slug}-copy-2, ..., always within the length limit and without a double hyphen', () => {
    expect([1, 2, 3, 10].map((n) => copySlug('news', n))).to.deep.equal(['news-copy', 'news-copy-2', 'news-copy-3', 'news-copy-10']);
    expect(copySlug('x'.repeat(SLUG_MAX_LENGTH), 12)).to.equal(`${'x'.repeat(SLUG_MAX_LENGTH - 8)}-copy-12`);
    const hyphenAtCut = `${'a'.repeat(194)}-bbbbb`;
    expect(copySlug(hyphenAtCut, 1)).to.equal(`${'a'.repeat(194)}-copy`);
    for (const n of [1, 2, 99]) expect(slugProblem(copySlug(hyphenAtCut, n))).to.equal(null);
  });
});
