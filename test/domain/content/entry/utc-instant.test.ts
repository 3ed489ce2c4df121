import { expect } from 'chai';
import { DomainError } from '../../../../src/domain/domain-error.ts';
import { toUtcInstant, type TimeInput } from '../../../../src/domain/content/entry/utc-instant.ts';

function fails(input: TimeInput, message: RegExp): void {
  let caught: unknown;
  try {
    toUtcInstant(input);
  } catch (error) {
    caught = error;
  }
  expect(caught, JSON.stringify(input)).to.be.instanceOf(DomainError);
  expect((caught as DomainError).code).to.equal('VALIDATION_ERROR');
  expect((caught as DomainError).message).to.match(message);
}

describe('toUtcInstant', () => {
  describe('an ISO date-time with an offset', () => {
    const cases: Array<[string, string]> = [
      ['2026-12-01T09:00:00+09:00', '2026-12-01T00:00:00.000Z'],
      ['2026-12-01T09:00+09:00', '2026-12-01T00:00:00.000Z'],
      ['2026-12-01T00:00:00Z', '2026-12-01T00:00:00.000Z'],
      ['2026-12-01T00:00:00.5z', '2026-12-01T00:00:00.500Z'],
      ['2026-12-01T00:00:00.123456789Z', '2026-12-01T00:00:00.123Z'],
      ['2026-01-01T01:30:00+05:30', '2025-12-31T20:00:00.000Z'],
      ['2026-06-30T20:00:00-04:00', '2026-07-01T00:00:00.000Z'],
      ['2024-02-29T12:00:00Z', '2024-02-29T12:00:00.000Z'],
    ];
    for (const [at, utc] of cases) {
      it(`${at} -> ${utc}`, () => expect(toUtcInstant({ at })).to.equal(utc));
    }

    it('without an offset: refused, pointing at {local, timeZone}', () => {
      fails({ at: '2026-12-01T09:00:00' }, /publishAt "2026-12-01T09:00:00" has no UTC offset/);
    });

    const invalid: Array<[string, RegExp]> = [
      ['tomorrow', /not an ISO 8601 date-time/],
      ['2026-12-01', /not an ISO 8601 date-time/],
      ['2026-13-01T00:00:00Z', /month 13/],
      ['2026-02-30T00:00:00Z', /day 30/],
      ['2025-02-29T00:00:00Z', /day 29/],
      ['2026-04-31T00:00:00Z', /day 31/],
      ['2026-01-01T24:00:00Z', /hour 24/],
      ['2026-01-01T00:60:00Z', /minute 60/],
      ['2026-12-31T23:59:60Z', /second 60/],
      ['2026-01-01T00:00:00+25:00', /offset/],
      ['2026-01-01T00:00:00+0900', /not an ISO 8601/],
    ];
    for (const [at, message] of invalid) {
      it(`refuses ${at}`, () => fails({ at }, message));
    }
  });

  describe('a local time in an IANA time zone', () => {
    it('Asia/Tokyo (no DST): 09:00 is 00:00 UTC', () => {
      expect(toUtcInstant({ local: '2026-12-01T09:00', timeZone: 'Asia/Tokyo' })).to.equal('2026-12-01T00:00:00.000Z');
      expect(toUtcInstant({ local: '2026-01-01T08:59:59.999', timeZone: 'Asia/Tokyo' })).to.equal('2025-12-31T23:59:59.999Z');
    });

    it('Asia/Kolkata (half-hour offset)', () => {
      expect(toUtcInstant({ local: '2026-01-01T05:30', timeZone: 'Asia/Kolkata' })).to.equal('2026-01-01T00:00:00.000Z');
    });

    it('Europe/Berlin in winter (+01:00) and in summer (+02:00)', () => {
      expect(toUtcInstant({ local: '2026-01-15T12:00', timeZone: 'Europe/Berlin' })).to.equal('2026-01-15T11:00:00.000Z');
      expect(toUtcInstant({ local: '2026-07-15T12:00', timeZone: 'Europe/Berlin' })).to.equal('2026-07-15T10:00:00.000Z');
    });

    describe('Europe/Berlin, spring forward on 2026-03-29 (02:00 CET becomes 03:00 CEST)', () => {
      const berlin = (local: string) => toUtcInstant({ local, timeZone: 'Europe/Berlin' });
      it('01:59 is still CET', () => expect(berlin('2026-03-29T01:59')).to.equal('2026-03-29T00:59:00.000Z'));
      it('02:30 does not exist: read with the offset before the gap, i.e. 03:30 CEST', () => expect(berlin('2026-03-29T02:30')).to.equal('2026-03-29T01:30:00.000Z'));
      it('03:00 is CEST', () => expect(berlin('2026-03-29T03:00')).to.equal('2026-03-29T01:00:00.000Z'));
    });

    describe('Europe/Berlin, fall back on 2026-10-25 (03:00 CEST becomes 02:00 CET)', () => {
      const berlin = (local: string) => toUtcInstant({ local, timeZone: 'Europe/Berlin' });
      it('01:59 is CEST', () => expect(berlin('2026-10-25T01:59')).to.equal('2026-10-24T23:59:00.000Z'));
      it('02:30 happens twice: the earlier (CEST)', () => expect(berlin('2026-10-25T02:30')).to.equal('2026-10-25T00:30:00.000Z'));
      it('03:00 is CET', () => expect(berlin('2026-10-25T03:00')).to.equal('2026-10-25T02:00:00.000Z'));
    });

    it('America/New_York, spring forward on 2026-03-08: 02:30 is 03:30 EDT', () => {
      expect(toUtcInstant({ local: '2026-03-08T02:30', timeZone: 'America/New_York' })).to.equal('2026-03-08T07:30:00.000Z');
    });

    it('round-trips every hour of 2026 in Berlin and New York (outside the spring gap)', () => {
      for (const timeZone of ['Europe/Berlin', 'America/New_York', 'Australia/Sydney']) {
        const format = new Intl.DateTimeFormat('sv-SE', { timeZone, year: 'numeric', month: '2-digit', day: '2-digit', hour: '2-digit', minute: '2-digit', hourCycle: 'h23' });
        for (let t = Date.UTC(2026, 0, 1); t < Date.UTC(2027, 0, 1); t += 3_600_000) {
          const local = format.format(new Date(t)).replace(' ', 'T');
          const utc = toUtcInstant({ local, timeZone });
          // The local time read back gives this instant, or (for the second 02:xx of a fall-back night) the earlier one.
          const diff = t - Date.parse(utc);
          expect(diff === 0 || diff === 3_600_000, `${timeZone} ${local}: ${utc} vs ${new Date(t).toISOString()}`).to.equal(true);
          expect(format.format(new Date(utc)).replace(' ', 'T')).to.equal(local);
        }
      }
    });

    it('refuses an unknown zone, an offset in the local time, and a bad date', () => {
      fails({ local: '2026-01-01T00:00', timeZone: 'Mars/Olympus_Mons' }, /timeZone "Mars\/Olympus_Mons" is not a known IANA time zone/);
      fails({ local: '2026-01-01T00:00Z', timeZone: 'Europe/Berlin' }, /without offset/);
      fails({ local: '2026-02-30T00:00', timeZone: 'Europe/Berlin' }, /day 30/);
      fails({ local: '2026-01-01T00:00', timeZone: '' }, /IANA time zone/);
    });
  });

  it('refuses anything else', () => {
    fails({} as TimeInput, /\{at\} or \{local, timeZone\}/);
    fails({ at: 42 } as unknown as TimeInput, /string/);
  });

  it('names the field it is given', () => {
    expect(() => toUtcInstant({ at: 'x' }, 'scheduledFor')).to.throw(/scheduledFor/);
  });
});
