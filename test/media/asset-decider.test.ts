import { expect } from 'chai';
import { assetDecider, type AssetCommand, type AssetState } from '../../src/domain/media/asset-decider.ts';
import type { AssetEvent } from '../../src/domain/media/media-events.ts';
import { fold } from '../../src/domain/decider.ts';
import { DomainError } from '../../src/domain/domain-error.ts';
import type { Principal } from '../../src/domain/principal.ts';

const PROJECT = '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a01';
const OTHER = '7d2a9c1e-2b44-4e8a-8f0a-6c1d2e3f4a02';
const ASSET = 'a1111111-1111-4111-8111-111111111111';
const NOW = '2026-11-22T10:00:00.000Z';
const SHA = 'ab'.repeat(32);

const admin: Principal = { kind: 'user', userId: 'u1', tenantId: 't1', role: 'tenant_admin' };
const editor: Principal = { kind: 'user', userId: 'u2', tenantId: 't1', role: 'tenant_user' };
const agent = (scope: 'full' | 'content' | 'schema', projectId = PROJECT): Principal => ({ kind: 'agent', keyId: 'k', tenantId: 't1', projectId, scope });

const upload: AssetCommand = {
  type: 'register_upload',
  assetId: ASSET,
  projectId: PROJECT,
  fileName: 'photo.png',
  mimeType: 'image/png',
  byteSize: 1234,
  sha256: SHA,
  width: 10,
  height: 20,
  animated: false,
  altText: 'A photo',
  caption: '',
  blobKey: `${PROJECT}/${ASSET}`,
  source: 'multipart',
};

function stateAfter(events: AssetEvent[]): AssetState {
  return fold(assetDecider, events);
}

function refusal(fn: () => unknown): DomainError {
  try {
    fn();
  } catch (error) {
    expect(error).to.be.instanceOf(DomainError);
    return error as DomainError;
  }
  throw new Error('expected a refusal');
}

describe('asset decider', () => {
  const uploaded = () => assetDecider.decide(upload, assetDecider.initialState(), { principal: editor, now: NOW });

  it('records an upload with everything known about the bytes', () => {
    const events = uploaded();
    expect(events).to.have.length(1);
    expect(events[0]!.type).to.equal('media.asset-uploaded');
    expect(events[0]!.data).to.include({ assetId: ASSET, projectId: PROJECT, mimeType: 'image/png', byteSize: 1234, sha256: SHA, width: 10, height: 20, uploadedAt: NOW, source: 'multipart' });
  });

  it('a repeated upload of the same bytes under the same id changes nothing; other bytes are refused', () => {
    const state = stateAfter(uploaded());
    expect(assetDecider.decide(upload, state, { principal: editor, now: NOW })).to.deep.equal([]);
    expect(refusal(() => assetDecider.decide({ ...upload, sha256: 'cd'.repeat(32) } as AssetCommand, state, { principal: editor, now: NOW })).code).to.equal('VALIDATION_ERROR');
  });

  it('refuses uploads by content-scope keys and keys of another project', () => {
    const content = refusal(() => assetDecider.decide(upload, assetDecider.initialState(), { principal: agent('content'), now: NOW }));
    expect(content.code).to.equal('FORBIDDEN');
    expect(content.message).to.contain('media.upload');
    expect(refusal(() => assetDecider.decide(upload, assetDecider.initialState(), { principal: agent('full', OTHER), now: NOW })).code).to.equal('NOT_FOUND');
    expect(assetDecider.decide(upload, assetDecider.initialState(), { principal: agent('schema'), now: NOW })).to.have.length(1);
  });

  it('validates file name, alt text and caption', () => {
    const bad = (patch: Partial<typeof upload>) => refusal(() => assetDecider.decide({ ...upload, ...patch } as AssetCommand, assetDecider.initialState(), { principal: admin, now: NOW }));
    expect(bad({ fileName: '  ' }).message).to.match(/fileName: must not be empty/);
    expect(bad({ fileName: 'a\nb' }).message).to.match(/fileName: must not contain control characters/);
    expect(bad({ altText: 'x'.repeat(1001) }).message).to.match(/altText: at most 1000/);
    expect(bad({ caption: 'x'.repeat(2001) }).message).to.match(/caption: at most 2000/);
    expect(bad({ byteSize: 0 }).message).to.match(/empty/);
    expect(assetDecider.decide({ ...upload, caption: 'two\nlines' }, assetDecider.initialState(), { principal: admin, now: NOW })).to.have.length(1);
  });

  it('changes alt text and caption (an absent one kept; no change, no event)', () => {
    const state = stateAfter(uploaded());
    const events = assetDecider.decide({ type: 'update_details', projectId: PROJECT, caption: 'At dawn' }, state, { principal: editor, now: NOW });
    expect(events).to.deep.equal([{ type: 'media.asset-details-changed', data: { projectId: PROJECT, assetId: ASSET, altText: 'A photo', caption: 'At dawn', changedAt: NOW } }]);
    expect(assetDecider.decide({ type: 'update_details', projectId: PROJECT, altText: 'A photo' }, state, { principal: editor, now: NOW })).to.deep.equal([]);
    expect(refusal(() => assetDecider.decide({ type: 'update_details', projectId: PROJECT, altText: 'x' }, state, { principal: agent('content'), now: NOW })).code).to.equal('FORBIDDEN');
    expect(refusal(() => assetDecider.decide({ type: 'update_details', projectId: OTHER, altText: 'x' }, state, { principal: admin, now: NOW })).code).to.equal('NOT_FOUND');
  });

  it('deletes (tenant_admin or full/schema keys), once; a deleted asset is NOT_FOUND', () => {
    const state = stateAfter(uploaded());
    const command: AssetCommand = { type: 'delete_asset', projectId: PROJECT, blobKeys: [upload.blobKey, `${upload.blobKey}.webp`] };
    expect(refusal(() => assetDecider.decide(command, state, { principal: editor, now: NOW })).code).to.equal('FORBIDDEN');
    expect(refusal(() => assetDecider.decide(command, state, { principal: agent('content'), now: NOW })).code).to.equal('FORBIDDEN');
    const events = assetDecider.decide(command, state, { principal: agent('full'), now: NOW });
    expect(events[0]!.type).to.equal('media.asset-deleted');
    const deleted = stateAfter([...uploaded(), ...events]);
    expect(deleted.status).to.equal('deleted');
    expect(refusal(() => assetDecider.decide(command, deleted, { principal: admin, now: NOW })).code).to.equal('NOT_FOUND');
    expect(refusal(() => assetDecider.decide({ type: 'update_details', projectId: PROJECT, altText: 'x' }, deleted, { principal: admin, now: NOW })).code).to.equal('NOT_FOUND');
  });

  it('humanApproval: an agent key may not delete media, every asset being served by its URL (403 HUMAN_APPROVAL_REQUIRED); a person may', () => {
    const state = stateAfter(uploaded());
    const command: AssetCommand = { type: 'delete_asset', projectId: PROJECT, blobKeys: [upload.blobKey] };
    const approvalPolicy = { humanApproval: true, fourEyes: false };
    const error = refusal(() => assetDecider.decide(command, state, { principal: agent('full'), now: NOW, approvalPolicy }));
    expect(error.code).to.equal('HUMAN_APPROVAL_REQUIRED');
    expect(error.subject).to.deep.equal({ assetId: ASSET });
    expect(assetDecider.decide(command, state, { principal: admin, now: NOW, approvalPolicy })).to.have.length(1);
  });
});
