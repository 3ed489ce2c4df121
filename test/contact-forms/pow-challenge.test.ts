import { createHash, randomBytes } from 'node:crypto';
import vm from 'node:vm';
import { expect } from 'chai';
import { ManualClock } from '../../src/clock.ts';
import { leadingZeroBits, PowChallenges, solveChallenge } from '../../src/contact-forms/pow-challenge.ts';
import { renderFormPage } from '../../src/contact-forms/hosted-page.ts';
import type { ContactFormSettings } from '../../src/domain/contact-form/contact-form-settings.ts';

describe('contact forms: the proof-of-work challenge of the hosted page', () => {
  const clock = new ManualClock('2026-11-22T10:00:00.000Z');
  const make = (overrides: Partial<ConstructorParameters<typeof PowChallenges>[0]> = {}) =>
    new PowChallenges({ key: randomBytes(32), difficulty: 8, ttlMs: 60_000, noJsMinMs: 5000, clock, ...overrides });

  it('accepts a solved token once: checked, spent, then refused as spent', () => {
    const challenges = make();
    const { token, difficulty } = challenges.issue('p:f');
    const solution = solveChallenge(token, difficulty);
    const verdict = challenges.check(token, solution, 'p:f');
    expect(verdict.ok).to.equal(true);
    expect(challenges.spend(verdict as { nonce: string; expiresAt: number })).to.equal(true);
    expect(challenges.check(token, solution, 'p:f')).to.deep.equal({ ok: false, reason: 'spent' });
    expect(challenges.spend(verdict as { nonce: string; expiresAt: number })).to.equal(false);
    challenges.unspend(verdict as { nonce: string });
    expect(challenges.check(token, solution, 'p:f').ok).to.equal(true);
  });

  it('refuses a wrong solution, another form, an altered or foreign token, and an expired one', () => {
    const challenges = make();
    const { token, difficulty } = challenges.issue('p:f');
    const solution = solveChallenge(token, difficulty);
    let wrong = '0';
    while (leadingZeroBits(createHash('sha256').update(`${token}:${wrong}`).digest()) >= difficulty) wrong = String(Number(wrong) + 1);
    expect(challenges.check(token, wrong, 'p:f')).to.deep.equal({ ok: false, reason: 'unsolved' });
    expect(challenges.check(token, 'abc', 'p:f')).to.deep.equal({ ok: false, reason: 'unsolved' });
    expect(challenges.check(token, solution, 'p:other')).to.deep.equal({ ok: false, reason: 'invalid' });
    const [v, body, mac] = token.split('.');
    const payload = JSON.parse(Buffer.from(body!, 'base64url').toString());
    const easier = Buffer.from(JSON.stringify({ ...payload, d: 0 })).toString('base64url');
    expect(challenges.check(`${v}.${easier}.${mac}`, '0', 'p:f')).to.deep.equal({ ok: false, reason: 'invalid' });
    expect(make().check(token, solution, 'p:f')).to.deep.equal({ ok: false, reason: 'invalid' });
    expect(challenges.check(undefined, solution, 'p:f')).to.deep.equal({ ok: false, reason: 'invalid' });
    clock.advance(60_001);
    expect(challenges.check(token, solution, 'p:f')).to.deep.equal({ ok: false, reason: 'expired' });
  });

  it('without the work: accepted only once the page is old enough (the no-JavaScript path), or never when that is off', () => {
    const challenges = make();
    const { token } = challenges.issue('p:f');
    clock.advance(2000);
    expect(challenges.check(token, '', 'p:f')).to.deep.equal({ ok: false, reason: 'too-early', retryAfterSeconds: 3 });
    clock.advance(3000);
    expect(challenges.check(token, undefined, 'p:f').ok).to.equal(true);
    const strict = make({ noJsMinMs: 0 });
    const issued = strict.issue('p:f');
    clock.advance(60_000 - 1);
    expect(strict.check(issued.token, undefined, 'p:f')).to.deep.equal({ ok: false, reason: 'javascript-required' });
  });

  it('the page\'s inline script computes the same SHA-256 and finds a solution the server accepts', () => {
    const challenges = make({ difficulty: 10 });
    const challenge = challenges.issue('p:f');
    const form: ContactFormSettings = {
      slug: 'contact', name: 'Contact', notification_emails: [], reply_to_field: null, honeypot_enabled: true, honeypot_field: 'website',
      fields: [{ key: 'name', type: 'text', label: 'Name', required: true }], autoreply_enabled: false, autoreply_to_field: null,
      autoreply_subject: {}, autoreply_body: {}, email_signature: null, hosted_page_enabled: true, chat_webhook: null,
    };
    const html = renderFormPage({ form, locale: 'en', action: '/contact/p/contact', embed: false, nonce: 'n', challenge, noJsMinSeconds: 5 });
    const script = /<script nonce="n">([\s\S]*?)<\/script>/.exec(html)![1]!;
    // A minimal stand-in for the DOM the script touches; the submit handler runs the real solver.
    const fields: Record<string, { value: string }> = { _pow: { value: '' } };
    let submitted = false;
    let handler: ((ev: { preventDefault(): void }) => void) | undefined;
    const formElement = {
      elements: { namedItem: (name: string) => fields[name] },
      getAttribute: (name: string) => (name === 'data-pow-token' ? challenge.token : String(challenge.difficulty)),
      querySelector: () => ({ disabled: false }),
      addEventListener: (_type: string, h: typeof handler) => (handler = h),
      submit: () => (submitted = true),
    };
    const timers: Array<() => void> = [];
    const context = vm.createContext({
      document: { getElementById: (id: string) => (id === 'contact-form' ? formElement : id === 'pow-status' ? { textContent: '' } : null) },
      setTimeout: (fn: () => void) => timers.push(fn),
      Math,
      Uint8Array,
      Int32Array,
    });
    vm.runInContext(script, context);
    handler!({ preventDefault() {} });
    while (!submitted && timers.length) timers.shift()!();
    expect(submitted).to.equal(true);
    expect(challenges.check(challenge.token, fields['_pow']!.value, 'p:f').ok).to.equal(true);
    // And it is the smallest solution, as the server-side solver finds it: the same hash function.
    expect(fields['_pow']!.value).to.equal(solveChallenge(challenge.token, challenge.difficulty));
  });
});
