import { expect } from 'chai';
import { HandledEvents, filterMatches } from '../../src/projection-engine/handled-events.ts';
import { projections } from '../../projections/index.ts';

const entry = 'entry-4f8a2c1e-0b7d-4e59-9a35-1d2c3b4a5f60';

describe('handled events: which projections a write waits for', () => {
  it('maps a write of the service to exactly the projections whose subscriptions deliver its events', () => {
    const handled = new HandledEvents(projections);
    const of = (...types: string[]) => handled.handlersOf(types.map((type) => ({ type, streamId: entry })));
    // An admin save: the audit trail, the admin lists, the public drafts of the preview, the review desk, and the
    // publication history (as-of reads find a published revision's values at the position of its save).
    expect(of('entry.revision-saved')).to.deep.equal(['audit-trail', 'content', 'public-content', 'review-queue', 'publication-history']);
    // A new entry adds what follows its creation (its publication history, the webhook jobs' entry list).
    expect(of('entry.created', 'entry.revision-saved')).to.deep.equal(['audit-trail', 'content', 'public-content', 'review-queue', 'publication-history', 'webhooks']);
    expect(of('project.renamed')).to.deep.equal(['audit-trail', 'access']);
    expect(of('media.asset-uploaded')).to.deep.equal(['audit-trail', 'media']);
    expect(of('contact-form.created')).to.deep.equal(['audit-trail', 'contact-forms']);
  });

  it('tells projections apart by stream prefix, alone and together with types (both must match)', () => {
    const handled = new HandledEvents([
      { name: 'by-prefix', filter: { streamPrefixes: ['order-', 'invoice-'] } },
      { name: 'by-type', filter: { eventTypes: ['order.placed'] } },
      { name: 'by-both', filter: { eventTypes: ['order.placed', 'order.paid'], streamPrefixes: ['order-'] } },
      { name: 'all' },
    ]);
    expect(handled.handlersOf([{ type: 'order.placed', streamId: 'order-1' }])).to.deep.equal(['by-prefix', 'by-type', 'by-both', 'all']);
    expect(handled.handlersOf([{ type: 'order.placed', streamId: 'cart-1' }])).to.deep.equal(['by-type', 'all']);
    expect(handled.handlersOf([{ type: 'invoice.sent', streamId: 'invoice-7' }])).to.deep.equal(['by-prefix', 'all']);
    expect(handled.handlersOf([{ type: 'order.paid', streamId: 'invoice-7' }])).to.deep.equal(['by-prefix', 'all']);
    expect(handled.handlersOf([{ type: 'order.paid', streamId: 'x-order-1' }]), 'a prefix, not a substring').to.deep.equal(['all']);
    // Several events: every projection that handles any of them, in the order the projections were given.
    expect(handled.handlersOf([{ type: 'invoice.sent', streamId: 'invoice-7' }, { type: 'order.placed', streamId: 'cart-1' }])).to.deep.equal(['by-prefix', 'by-type', 'all']);
    expect(handled.handlersOf([])).to.deep.equal([]);
    expect(handled.handles('by-both', { type: 'order.paid', streamId: 'order-2' })).to.equal(true);
    expect(handled.handles('nobody', { type: 'order.paid', streamId: 'order-2' }), 'a projection not known').to.equal(false);
  });

  it('compares prefixes as the stores do, character for character, outside the BMP too', () => {
    expect(filterMatches({ streamPrefixes: ['😀'] }, { type: 't', streamId: '😀-1' })).to.equal(true);
    expect(filterMatches({ streamPrefixes: ['😀'] }, { type: 't', streamId: '😁-1' })).to.equal(false);
    expect(filterMatches({ streamPrefixes: ['é'] }, { type: 't', streamId: 'e\u0301' }), 'no normalisation').to.equal(false);
    expect(filterMatches({ eventTypes: ['Order.Placed'] }, { type: 'order.placed', streamId: 's' }), 'types are case-sensitive').to.equal(false);
    expect(filterMatches(undefined, { type: 'anything', streamId: 's' })).to.equal(true);
  });

  it('refuses an empty list of types or prefixes, which the stores read differently (none on SQLite, any on EventStoreDB)', () => {
    expect(() => new HandledEvents([{ name: 'p', filter: { eventTypes: [] } }])).to.throw(/projection p: filter.eventTypes is empty/);
    expect(() => new HandledEvents([{ name: 'p', filter: { streamPrefixes: [] } }])).to.throw(/projection p: filter.streamPrefixes is empty/);
  });
});
