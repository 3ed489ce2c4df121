/**
 * A project's API keys: issuing agent and public keys, revoking them. See AccessService.
 */
import { randomUUID } from 'node:crypto';
import type { Caller } from '../domain/access/caller.ts';
import type { KeyEvent } from '../domain/access/access-events.ts';
import { projectKeysStream } from '../domain/access/access-streams.ts';
import { keyDecider, type ProjectKeys } from '../domain/access/key-decider.ts';
import { newApiKey } from '../security/api-keys.ts';
import { loadAggregate, type CommandResult } from './command-handler.ts';
import type { WriteOptions, IssueKeyOptions, AgentKeyIssued, PublicKeyIssued, KeyRevoked } from './access-service-types.ts';
import { scopeValue, positionOf } from './access-input.ts';
import type { AccessWriter } from './access-writer.ts';

export class KeyAccess {
  readonly #w: AccessWriter;

  constructor(writer: AccessWriter) {
    this.#w = writer;
  }

  /**
   * Issues an agent key (scope full, content or schema). PLAN_REQUIRED when the plan allows one active
   * agent key (Free, Solo) and the project has one. The key is in the result, in clear, once.
   */
  async issueAgentKey(caller: Caller, projectId: string, scope: string, name: string, options: IssueKeyOptions = {}): Promise<AgentKeyIssued> {
    const keyScope = scopeValue(scope);
    const material = newApiKey('agent');
    const keyId = options.keyId ?? randomUUID();
    const result = await this.#w.keys(caller, projectId, { type: 'issue-agent-key', keyId, scope: keyScope, name, prefix: material.prefix, hash: material.hash }, options);
    const issued = result.state.agentKeys.find((k) => k.id === keyId)!;
    return { keyId, projectId, key: material.key, prefix: material.prefix, scope: issued.scope, name: issued.name, position: positionOf(result) };
  }

  async issuePublicKey(caller: Caller, projectId: string, options: IssueKeyOptions = {}): Promise<PublicKeyIssued> {
    const material = newApiKey('public');
    const keyId = options.keyId ?? randomUUID();
    const result = await this.#w.keys(caller, projectId, { type: 'issue-public-key', keyId, prefix: material.prefix, hash: material.hash }, options);
    return { keyId, projectId, key: material.key, prefix: material.prefix, position: positionOf(result) };
  }

  /** Revokes an agent key; revoking one already revoked changes nothing. NOT_FOUND for an unknown id. */
  async revokeAgentKey(caller: Caller, projectId: string, keyId: string, options: WriteOptions = {}): Promise<KeyRevoked> {
    const result = await this.#w.keys(caller, projectId, { type: 'revoke-agent-key', keyId }, options);
    return revoked(result, projectId, keyId, 'agent');
  }

  async revokePublicKey(caller: Caller, projectId: string, keyId: string, options: WriteOptions = {}): Promise<KeyRevoked> {
    const result = await this.#w.keys(caller, projectId, { type: 'revoke-public-key', keyId }, options);
    return revoked(result, projectId, keyId, 'public');
  }

  /** Revokes a key of either kind, found by id in the project's keys. NOT_FOUND when it is neither. */
  async revokeKey(caller: Caller, projectId: string, keyId: string, options: WriteOptions = {}): Promise<KeyRevoked> {
    const project = await this.#w.requireProject(caller, projectId);
    const { state } = await loadAggregate(this.#w.log, projectKeysStream(project.id), keyDecider);
    if (state.publicKeys.some((k) => k.id === keyId)) return this.revokePublicKey(caller, projectId, keyId, options);
    // Unknown ids go to the agent-key path too, whose decider answers NOT_FOUND.
    return this.revokeAgentKey(caller, projectId, keyId, options);
  }
}

function revoked(result: CommandResult<ProjectKeys, KeyEvent>, projectId: string, keyId: string, type: 'agent' | 'public'): KeyRevoked {
  const keys = type === 'agent' ? result.state.agentKeys : result.state.publicKeys;
  const key = keys.find((k) => k.id === keyId)!;
  return { keyId, projectId, type, revokedAt: key.revokedAt!, changed: result.events.length > 0, position: positionOf(result) };
}
