import { createHash } from 'node:crypto';
import { expect } from 'chai';
import {
  apiKeyKind,
  generateAgentKey,
  generatePublicKey,
  hashApiKey,
  keyPrefix,
  looksLikeAgentKey,
  looksLikePublicKey,
  newApiKey,
} from '../../src/security/api-keys.ts';

describe('API keys', () => {
  it('generates agent keys as sk-agent- and 32 random bytes in base64url', () => {
    const key = generateAgentKey();
    expect(key).to.match(/^sk-agent-[A-Za-z0-9_-]{43}$/);
    expect(Buffer.from(key.slice('sk-agent-'.length), 'base64url')).to.have.length(32);
    expect(generateAgentKey()).not.to.equal(key);
  });

  it('generates public keys as service_pub_ and 32 random bytes in base64url', () => {
    const key = generatePublicKey();
    expect(key).to.match(/^service_pub_[A-Za-z0-9_-]{43}$/);
    expect(generatePublicKey()).not.to.equal(key);
  });

  it('hashes the whole key with SHA-256, lowercase hex', () => {
    const key = generateAgentKey();
    expect(hashApiKey(key)).to.equal(createHash('sha256').update(key).digest('hex'));
    expect(hashApiKey(key)).to.match(/^[0-9a-f]{64}$/);
  });

  it('shows 12 characters of an agent key and 16 of a public key', () => {
    const agent = generateAgentKey();
    const pub = generatePublicKey();
    expect(keyPrefix(agent)).to.equal(agent.slice(0, 12)).and.to.have.length(12);
    expect(keyPrefix(pub)).to.equal(pub.slice(0, 16)).and.to.have.length(16);
  });

  it('bundles key, prefix and hash', () => {
    const material = newApiKey('agent');
    expect(material.prefix).to.equal(keyPrefix(material.key));
    expect(material.hash).to.equal(hashApiKey(material.key));
    expect(looksLikePublicKey(newApiKey('public').key)).to.equal(true);
  });

  it('checks the format before any lookup', () => {
    const agent = generateAgentKey();
    const pub = generatePublicKey();
    expect(looksLikeAgentKey(agent)).to.equal(true);
    expect(looksLikeAgentKey(pub)).to.equal(false);
    expect(looksLikePublicKey(pub)).to.equal(true);
    expect(looksLikePublicKey(agent)).to.equal(false);
    for (const bad of [undefined, null, 42, '', 'sk-agent-', `${agent}x`, agent.slice(0, -1), `Bearer ${agent}`, agent.replace(/.$/, '!'), ` ${agent}`]) {
      expect(looksLikeAgentKey(bad), String(bad)).to.equal(false);
    }
    expect(apiKeyKind(agent)).to.equal('agent');
    expect(apiKeyKind(pub)).to.equal('public');
    expect(apiKeyKind('nonsense')).to.equal(null);
  });
});
