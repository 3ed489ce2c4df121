/**
 * A project's settings: its plan, content locales, login appearance, approval policy, review-notice chat,
 * site settings, console IP allowlist and custom domains. See AccessService.
 */
import { randomUUID } from 'node:crypto';
import { actorOf, type Caller } from '../domain/access/caller.ts';
import { projectStream } from '../domain/access/access-streams.ts';
import { domainChanges, projectDecider, type ApprovalPolicy, type LoginAppearance, type Project, type ProjectCommand, type SealedChatWebhook, type SiteSettings } from '../domain/access/project-decider.ts';
import type { ProjectEvent } from '../domain/access/access-events.ts';
import { hostnameList } from '../domain/access/access-values.ts';
import { handleCommand, type CommandResult } from './command-handler.ts';
import { CUSTOM_DOMAIN_SCOPE, type WriteOptions, type PlanChanged, type ContentLocalesPatched, type ProjectWriteOptions, type ProjectSettingChanged, type IpAllowlistEntryAdded } from './access-service-types.ts';
import { definedOnly, planValue, positionOf } from './access-input.ts';
import type { AccessWriter } from './access-writer.ts';

export class ProjectSettingsAccess {
  readonly #w: AccessWriter;

  constructor(writer: AccessWriter) {
    this.#w = writer;
  }

  async changePlan(caller: Caller, projectId: string, plan: string, options: WriteOptions = {}): Promise<PlanChanged> {
    const before = await this.#w.requireProject(caller, projectId);
    const result = await handleCommand(this.#w.log, projectStream(projectId), projectDecider, { type: 'change-plan', plan: planValue(plan) }, { caller }, this.#w.append(caller, options));
    const event = result.events[0];
    const previousPlan = event?.type === 'project.plan-changed' ? event.data.previousPlan : before.plan;
    return { projectId, plan: result.state!.plan, previousPlan, changed: result.events.length > 0, position: positionOf(result) };
  }

  /** A patch: give locales, defaultLocale or both. The default locale must be one of the locales. */
  async patchContentLocales(caller: Caller, projectId: string, patch: { locales?: string[]; defaultLocale?: string }, options: WriteOptions = {}): Promise<ContentLocalesPatched> {
    await this.#w.requireProject(caller, projectId);
    const command = {
      type: 'patch-content-locales' as const,
      ...(patch.locales === undefined ? {} : { locales: patch.locales }),
      ...(patch.defaultLocale === undefined ? {} : { defaultLocale: patch.defaultLocale }),
    };
    const result = await handleCommand(this.#w.log, projectStream(projectId), projectDecider, command, { caller }, this.#w.append(caller, options));
    return { projectId, contentLocales: result.state!.contentLocales, changed: result.events.length > 0, position: positionOf(result) };
  }

  /** A patch of the console login page's appearance: an absent field is unchanged, null clears it. */
  async updateLoginAppearance(
    caller: Caller,
    projectId: string,
    patch: { logoUrl?: string | null; primaryColor?: string | null; accentColor?: string | null; message?: string | null },
    options: WriteOptions = {},
  ): Promise<ProjectSettingChanged<LoginAppearance>> {
    const result = await this.#w.project(caller, projectId, { type: 'update-login-appearance', ...definedOnly(patch) }, options);
    return { projectId, value: result.state!.loginAppearance, changed: result.events.length > 0, position: positionOf(result) };
  }
  /** Sets the project's approval policy (tenant_admin sessions and operators; agent keys are refused). */
  async setApprovalPolicy(caller: Caller, projectId: string, patch: { humanApproval?: boolean | undefined; fourEyes?: boolean | undefined }): Promise<ProjectSettingChanged<ApprovalPolicy>> {
    const result = await this.#w.project(caller, projectId, { type: 'set-approval-policy', ...definedOnly(patch) }, {});
    return { projectId, value: result.state!.approvalPolicy, changed: result.events.length > 0, position: positionOf(result) };
  }

  /** Sets where review notices are also posted (a chat webhook, sealed by the caller's application), or removes it with null. */
  async setReviewNoticeChat(caller: Caller, projectId: string, chatWebhook: SealedChatWebhook | null): Promise<ProjectSettingChanged<string | null>> {
    const result = await this.#w.project(caller, projectId, { type: 'set-review-notice-chat', chatWebhook }, {});
    return { projectId, value: result.state!.reviewNoticeChat?.display ?? null, changed: result.events.length > 0, position: positionOf(result) };
  }
  /** A patch of the site settings (siteUrl, siteName, description): an absent field is unchanged, null clears it. */
  async updateSiteSettings(
    caller: Caller,
    projectId: string,
    patch: { siteUrl?: string | null; siteName?: string | null; description?: string | null },
    options: WriteOptions = {},
  ): Promise<ProjectSettingChanged<SiteSettings>> {
    const result = await this.#w.project(caller, projectId, { type: 'update-site-settings', ...definedOnly(patch) }, options);
    return { projectId, value: result.state!.siteSettings, changed: result.events.length > 0, position: positionOf(result) };
  }

  /**
   * Adds a console login IP allowlist entry (Business plan and above: PLAN_REQUIRED below; VALIDATION_ERROR
   * for a bad CIDR; CONFLICT for a range already listed). With `clientIp`, a console user cannot add an
   * entry that would refuse their own address.
   */
  async addIpAllowlistEntry(caller: Caller, projectId: string, input: { cidr: string; label?: string | null }, options: ProjectWriteOptions & { entryId?: string } = {}): Promise<IpAllowlistEntryAdded> {
    const entryId = options.entryId ?? randomUUID();
    const result = await this.#w.project(caller, projectId, { type: 'add-ip-allowlist-entry', entryId, cidr: input.cidr, label: input.label ?? null }, options);
    const entry = result.state!.consoleIpAllowlist.find((e) => e.id === entryId)!;
    return { projectId, entry: { ...entry }, position: positionOf(result) };
  }

  /** Removes an allowlist entry (every plan, so a downgraded project can clear its list). NOT_FOUND for an unknown id. */
  async removeIpAllowlistEntry(caller: Caller, projectId: string, entryId: string, options: ProjectWriteOptions = {}): Promise<{ projectId: string; entryId: string; position: bigint }> {
    const result = await this.#w.project(caller, projectId, { type: 'remove-ip-allowlist-entry', entryId }, options);
    return { projectId, entryId, position: positionOf(result) };
  }

  /**
   * Replaces the project's custom domains. Each added host is reserved system-wide first (CONFLICT naming
   * it when another project holds it); after the append the removed hosts are released. When the append
   * fails, the hosts this call claimed are released again.
   */
  async setCustomDomains(caller: Caller, projectId: string, domains: readonly string[], options: WriteOptions = {}): Promise<ProjectSettingChanged<string[]>> {
    const before = await this.#w.requireProject(caller, projectId);
    const command: ProjectCommand = { type: 'set-custom-domains', domains: [...domains] };
    // Dry run: permission and host-name checks before any claim.
    this.#w.dryRun(projectDecider, command, before, { caller });
    const next = hostnameList(domains);
    const { added, removed } = domainChanges(before.customDomains, next);
    const actor = actorOf(caller);
    const claimed: string[] = [];
    let result: CommandResult<Project | null, ProjectEvent>;
    try {
      for (const host of added) {
        const heldBefore = (await this.#w.reservations.ownerOf(CUSTOM_DOMAIN_SCOPE, host)) === projectId;
        await this.#w.reservations.claim(CUSTOM_DOMAIN_SCOPE, host, projectId, actor, 'custom domain');
        if (!heldBefore) claimed.push(host);
      }
      result = await handleCommand(this.#w.log, projectStream(projectId), projectDecider, command, { caller }, this.#w.append(caller, options));
    } catch (error) {
      for (const host of claimed) await this.#w.reservations.release(CUSTOM_DOMAIN_SCOPE, host, projectId, actor).catch(() => undefined);
      throw error;
    }
    // The stream's state after the append decides what is released (a concurrent change may have re-added a host).
    const now = result.state!.customDomains;
    for (const host of removed) {
      if (!now.includes(host)) await this.#w.reservations.release(CUSTOM_DOMAIN_SCOPE, host, projectId, actor).catch(() => undefined);
    }
    return { projectId, value: [...now], changed: result.events.length > 0, position: positionOf(result) };
  }
}
