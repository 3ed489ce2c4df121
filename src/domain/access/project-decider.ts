import type { Decider } from '../decider.ts';
import { conflict, invalid, notFound } from '../domain-error.ts';
import { PLANS, planAtLeast, requirePlan, type Plan } from '../plans.ts';
import { isAllowed, parseCidr } from '../../security/ip-allowlist.ts';
import type { ProjectEvent } from './access-events.ts';
import {
  displayName,
  hexColour,
  hostnameList,
  httpsUrl,
  localeList,
  localeTag,
  LOGIN_MESSAGE_MAX_LENGTH,
  NAME_MAX_LENGTH,
  optionalText,
  projectSlug,
  SITE_DESCRIPTION_MAX_LENGTH,
} from './access-values.ts';
import { assertCallerSeesProject, assertCallerSeesTenant, type Caller } from './caller.ts';
import { assertCan } from './permissions.ts';

/** A project: the unit content, keys and plans belong to. Stream: projectStream(id). */
export interface ContentLocales {
  /** BCP 47 tags in canonical case, in the order the admin gave. */
  locales: string[];
  /** One of `locales`. */
  defaultLocale: string;
}

export interface SiteSettings {
  /** https URL without trailing slash, or null until set. */
  siteUrl: string | null;
  siteName: string | null;
  description: string | null;
}

/** Shown on the console login page, readable without a session. */
export interface LoginAppearance {
  logoUrl: string | null;
  primaryColor: string | null;
  accentColor: string | null;
  message: string | null;
}

/**
 * How revisions may be approved and published in the project, beyond the roles of spec section 3 (both off by
 * default, so the spec's behaviour is the default). Enforced by the entry decider (EntryContext.approvalPolicy).
 */
export interface ApprovalPolicy {
  /** Agent keys may save and submit revisions, but not approve or publish them. */
  humanApproval: boolean;
  /** Whoever approves or publishes a revision differs from its last editor and from its submitter. */
  fourEyes: boolean;
}

export const DEFAULT_APPROVAL_POLICY: Readonly<ApprovalPolicy> = Object.freeze({ humanApproval: false, fourEyes: false });

/** Rule by rule, the stricter of two policies (a rule is on when it is on in either). */
export function strictestOf(a: ApprovalPolicy, b: ApprovalPolicy): ApprovalPolicy {
  return { humanApproval: a.humanApproval || b.humanApproval, fourEyes: a.fourEyes || b.fourEyes };
}

export interface IpAllowlistEntry {
  id: string;
  /** Canonical CIDR (network address / prefix length). */
  cidr: string;
  label: string;
}

export interface Project {
  id: string;
  tenantId: string;
  name: string;
  slug: string;
  plan: Plan;
  contentLocales: ContentLocales;
  /** Host names, unique within the project (and reserved system-wide by the application). */
  customDomains: string[];
  siteSettings: SiteSettings;
  loginAppearance: LoginAppearance;
  /** Entries stay when a project drops below Business; they are enforced only on Business and above. */
  consoleIpAllowlist: IpAllowlistEntry[];
  approvalPolicy: ApprovalPolicy;
  /** Review notices' chat webhook (sealed), or null. */
  reviewNoticeChat: SealedChatWebhook | null;
}

/** A chat webhook URL as kept: sealed with the secrets key (src/security/secret-box.ts), and shown by scheme and host. */
export interface SealedChatWebhook {
  sealedUrl: string;
  display: string;
}

export type ProjectState = Project | null;

export const DEFAULT_CONTENT_LOCALES: Readonly<ContentLocales> = Object.freeze({ locales: ['en'], defaultLocale: 'en' });
export const MAX_IP_ALLOWLIST_ENTRIES = 100;
export const IP_ALLOWLIST_LABEL_MAX_LENGTH = 100;

export type ProjectCommand =
  | {
      type: 'create-project';
      projectId: string;
      tenantId: string;
      name: string;
      slug: string;
      plan: Plan;
      /** Default: en only. */
      contentLocales?: { locales: string[]; defaultLocale: string };
    }
  | { type: 'rename-project'; name: string }
  | { type: 'change-plan'; plan: Plan }
  /** A patch: give locales, defaultLocale, or both. */
  | { type: 'patch-content-locales'; locales?: string[]; defaultLocale?: string }
  /** Replaces the whole list. */
  | { type: 'set-custom-domains'; domains: string[] }
  /** A patch: an absent field is unchanged, null clears it. */
  | { type: 'update-site-settings'; siteUrl?: string | null; siteName?: string | null; description?: string | null }
  /** A patch: an absent field is unchanged, null clears it. */
  | { type: 'update-login-appearance'; logoUrl?: string | null; primaryColor?: string | null; accentColor?: string | null; message?: string | null }
  /** A patch: an absent rule is unchanged. */
  | { type: 'set-approval-policy'; humanApproval?: boolean; fourEyes?: boolean }
  /** Sealed by the application (the URL is a credential); null removes it. Standard plan and above. */
  | { type: 'set-review-notice-chat'; chatWebhook: SealedChatWebhook | null }
  | { type: 'add-ip-allowlist-entry'; entryId: string; cidr: string; label?: string | null }
  | { type: 'remove-ip-allowlist-entry'; entryId: string };

export interface ProjectContext {
  caller: Caller;
  /**
   * The caller's address, when the command comes through the console. With it, a console user cannot
   * change the allowlist so that it no longer admits the address they are using (locking themselves out).
   */
  clientIp?: string;
}

export const projectDecider: Decider<ProjectState, ProjectCommand, ProjectEvent, ProjectContext> = {
  initialState: () => null,
  evolve: evolveProject,
  decide: decideProject,
};

function evolveProject(state: ProjectState, event: ProjectEvent): ProjectState {
  if (event.type === 'project.created') {
    const d = event.data;
    return {
      id: d.projectId,
      tenantId: d.tenantId,
      name: d.name,
      slug: d.slug,
      plan: d.plan,
      contentLocales: { locales: [...d.contentLocales.locales], defaultLocale: d.contentLocales.defaultLocale },
      customDomains: [],
      siteSettings: { siteUrl: null, siteName: null, description: null },
      loginAppearance: { logoUrl: null, primaryColor: null, accentColor: null, message: null },
      consoleIpAllowlist: [],
      approvalPolicy: { ...DEFAULT_APPROVAL_POLICY },
      reviewNoticeChat: null,
    };
  }
  if (!state) return state;
  switch (event.type) {
    case 'project.renamed':
      return { ...state, name: event.data.name };
    case 'project.plan-changed':
      return { ...state, plan: event.data.plan };
    case 'project.content-locales-changed':
      return { ...state, contentLocales: { locales: [...event.data.locales], defaultLocale: event.data.defaultLocale } };
    case 'project.domains-changed':
      return { ...state, customDomains: [...event.data.domains] };
    case 'project.site-settings-changed': {
      const { siteUrl, siteName, description } = event.data;
      return { ...state, siteSettings: { siteUrl, siteName, description } };
    }
    case 'project.login-appearance-changed': {
      const { logoUrl, primaryColor, accentColor, message } = event.data;
      return { ...state, loginAppearance: { logoUrl, primaryColor, accentColor, message } };
    }
    case 'project.approval-policy-changed':
      return { ...state, approvalPolicy: { humanApproval: event.data.humanApproval, fourEyes: event.data.fourEyes } };
    case 'project.review-notice-chat-changed':
      return { ...state, reviewNoticeChat: event.data.chatWebhook ? { ...event.data.chatWebhook } : null };
    case 'project.ip-allowlist-entry-added': {
      const { entryId, cidr, label } = event.data;
      return { ...state, consoleIpAllowlist: [...state.consoleIpAllowlist, { id: entryId, cidr, label }] };
    }
    case 'project.ip-allowlist-entry-removed':
      return { ...state, consoleIpAllowlist: state.consoleIpAllowlist.filter((entry) => entry.id !== event.data.entryId) };
  }
}

function decideProject(command: ProjectCommand, state: ProjectState, context: ProjectContext): ProjectEvent[] {
  const { caller } = context;
  if (command.type === 'create-project') {
    assertCallerSeesTenant(caller, command.tenantId, 'tenant');
    assertCan(caller, 'projects.create');
    if (state) throw conflict(`project ${command.projectId} already exists`);
    const locales = command.contentLocales ?? DEFAULT_CONTENT_LOCALES;
    return [
      {
        type: 'project.created',
        data: {
          projectId: command.projectId,
          tenantId: command.tenantId,
          name: displayName(command.name, 'name'),
          slug: projectSlug(command.slug),
          plan: planValue(command.plan),
          contentLocales: contentLocales(locales.locales, locales.defaultLocale),
        },
      },
    ];
  }

  if (!state) throw notFound('project not found');
  assertCallerSeesProject(caller, state);
  const projectId = state.id;

  switch (command.type) {
    case 'rename-project': {
      assertCan(caller, 'project.settings.change');
      const name = displayName(command.name, 'name');
      return name === state.name ? [] : [{ type: 'project.renamed', data: { projectId, name } }];
    }

    case 'change-plan': {
      assertCan(caller, 'billing.change');
      const plan = planValue(command.plan);
      return plan === state.plan ? [] : [{ type: 'project.plan-changed', data: { projectId, plan, previousPlan: state.plan } }];
    }

    case 'patch-content-locales': {
      assertCan(caller, 'locales.patch');
      if (command.locales === undefined && command.defaultLocale === undefined) {
        throw invalid('give locales, defaultLocale or both');
      }
      const locales = command.locales === undefined ? state.contentLocales.locales : localeList(command.locales);
      const defaultLocale = command.defaultLocale === undefined ? state.contentLocales.defaultLocale : localeTag(command.defaultLocale, 'defaultLocale');
      if (!locales.includes(defaultLocale)) {
        if (command.defaultLocale === undefined) {
          throw invalid(
            `locales: ${defaultLocale} cannot be removed because it is the default locale`,
            `Set defaultLocale to one of ${locales.join(', ')} in the same request, or keep ${defaultLocale}.`,
          );
        }
        throw invalid(`defaultLocale: ${defaultLocale} is not one of the content locales (${locales.join(', ')})`, `Add ${defaultLocale} to locales as well.`);
      }
      const unchanged = defaultLocale === state.contentLocales.defaultLocale && sameList(locales, state.contentLocales.locales);
      return unchanged ? [] : [{ type: 'project.content-locales-changed', data: { projectId, locales, defaultLocale } }];
    }

    case 'set-custom-domains': {
      assertCan(caller, 'project.settings.change');
      const domains = hostnameList(command.domains);
      return sameList(domains, state.customDomains) ? [] : [{ type: 'project.domains-changed', data: { projectId, domains } }];
    }

    case 'update-site-settings': {
      assertCan(caller, 'project.settings.change');
      const current = state.siteSettings;
      const next: SiteSettings = {
        siteUrl: command.siteUrl === undefined ? current.siteUrl : command.siteUrl === null ? null : httpsUrl(command.siteUrl, 'siteUrl'),
        siteName: command.siteName === undefined ? current.siteName : optionalText(command.siteName, 'siteName', NAME_MAX_LENGTH),
        description:
          command.description === undefined ? current.description : optionalText(command.description, 'description', SITE_DESCRIPTION_MAX_LENGTH),
      };
      const unchanged = next.siteUrl === current.siteUrl && next.siteName === current.siteName && next.description === current.description;
      return unchanged ? [] : [{ type: 'project.site-settings-changed', data: { projectId, ...next } }];
    }

    case 'update-login-appearance': {
      assertCan(caller, 'login-appearance.update');
      const current = state.loginAppearance;
      const colour = (value: string | null | undefined, field: 'primaryColor' | 'accentColor') =>
        value === undefined ? current[field] : value === null || value.trim() === '' ? null : hexColour(value, field);
      const next: LoginAppearance = {
        logoUrl:
          command.logoUrl === undefined
            ? current.logoUrl
            : command.logoUrl === null || command.logoUrl.trim() === ''
              ? null
              : httpsUrl(command.logoUrl, 'logoUrl', { keepQuery: true }),
        primaryColor: colour(command.primaryColor, 'primaryColor'),
        accentColor: colour(command.accentColor, 'accentColor'),
        message: command.message === undefined ? current.message : optionalText(command.message, 'message', LOGIN_MESSAGE_MAX_LENGTH),
      };
      const unchanged = (Object.keys(next) as Array<keyof LoginAppearance>).every((key) => next[key] === current[key]);
      return unchanged ? [] : [{ type: 'project.login-appearance-changed', data: { projectId, ...next } }];
    }

    case 'set-approval-policy': {
      assertCan(caller, 'approval-policy.change');
      for (const rule of ['humanApproval', 'fourEyes'] as const) {
        if (command[rule] !== undefined && typeof command[rule] !== 'boolean') throw invalid(`${rule} must be true or false`);
      }
      if (command.humanApproval === undefined && command.fourEyes === undefined) throw invalid('give humanApproval, fourEyes or both');
      const current = state.approvalPolicy;
      const next: ApprovalPolicy = { humanApproval: command.humanApproval ?? current.humanApproval, fourEyes: command.fourEyes ?? current.fourEyes };
      const unchanged = next.humanApproval === current.humanApproval && next.fourEyes === current.fourEyes;
      return unchanged ? [] : [{ type: 'project.approval-policy-changed', data: { projectId, ...next, previous: { ...current } } }];
    }

    case 'set-review-notice-chat': {
      assertCan(caller, 'project.settings.change');
      if (command.chatWebhook === null) return state.reviewNoticeChat === null ? [] : [{ type: 'project.review-notice-chat-changed', data: { projectId, chatWebhook: null } }];
      requirePlan(state.plan, 'standard', 'Chat notifications');
      return [{ type: 'project.review-notice-chat-changed', data: { projectId, chatWebhook: { ...command.chatWebhook } } }];
    }

    case 'add-ip-allowlist-entry': {
      assertCan(caller, 'ip-allowlist.manage');
      requirePlan(state.plan, 'business', 'The console login IP allowlist');
      const parsed = parseCidr(command.cidr);
      if (!parsed.ok) throw invalid(`cidr: ${parsed.reason}`, 'For example: 203.0.113.0/24, 2001:db8::/32 or a single address');
      const label = optionalText(command.label ?? null, 'label', IP_ALLOWLIST_LABEL_MAX_LENGTH) ?? '';
      if (state.consoleIpAllowlist.some((entry) => entry.id === command.entryId)) throw conflict(`allowlist entry ${command.entryId} already exists`);
      const existing = state.consoleIpAllowlist.find((entry) => entry.cidr === parsed.cidr);
      if (existing) throw conflict(`${parsed.cidr} is already in the console IP allowlist`, existing.label ? `It is labelled "${existing.label}".` : undefined);
      if (state.consoleIpAllowlist.length >= MAX_IP_ALLOWLIST_ENTRIES) {
        throw invalid(`the console IP allowlist holds at most ${MAX_IP_ALLOWLIST_ENTRIES} entries`, 'Combine addresses into wider CIDR ranges.');
      }
      const entry = { id: command.entryId, cidr: parsed.cidr, label };
      assertNoLockout(context, [...state.consoleIpAllowlist, entry]);
      return [{ type: 'project.ip-allowlist-entry-added', data: { projectId, entryId: entry.id, cidr: entry.cidr, label } }];
    }

    case 'remove-ip-allowlist-entry': {
      // Allowed on every plan, so a project that dropped below Business can still clear its list.
      assertCan(caller, 'ip-allowlist.manage');
      if (!state.consoleIpAllowlist.some((entry) => entry.id === command.entryId)) throw notFound('allowlist entry not found');
      const remaining = state.consoleIpAllowlist.filter((entry) => entry.id !== command.entryId);
      if (planAtLeast(state.plan, 'business')) assertNoLockout(context, remaining);
      return [{ type: 'project.ip-allowlist-entry-removed', data: { projectId, entryId: command.entryId } }];
    }
  }
}

/** The allowlist to enforce now: the entries on Business and above, nothing (everyone allowed) below. */
export function effectiveIpAllowlist(project: Pick<Project, 'plan' | 'consoleIpAllowlist'>): IpAllowlistEntry[] {
  return planAtLeast(project.plan, 'business') ? project.consoleIpAllowlist : [];
}

/** What the console login page shows, readable without a session. */
export function loginBranding(project: Pick<Project, 'id' | 'name' | 'loginAppearance'>): { projectId: string; projectName: string } & LoginAppearance {
  return { projectId: project.id, projectName: project.name, ...project.loginAppearance };
}

/** Domains a domains-changed event adds and removes, for the application's reservations. */
export function domainChanges(previous: readonly string[], next: readonly string[]): { added: string[]; removed: string[] } {
  return { added: next.filter((d) => !previous.includes(d)), removed: previous.filter((d) => !next.includes(d)) };
}

function contentLocales(localesIn: readonly string[], defaultIn: string): ContentLocales {
  const locales = localeList(localesIn);
  const defaultLocale = localeTag(defaultIn, 'defaultLocale');
  if (!locales.includes(defaultLocale)) throw invalid(`defaultLocale: ${defaultLocale} is not one of the content locales (${locales.join(', ')})`);
  return { locales, defaultLocale };
}

function planValue(plan: string): Plan {
  if (!(PLANS as readonly string[]).includes(plan)) throw invalid(`plan must be one of ${PLANS.join(', ')}`);
  return plan as Plan;
}

function assertNoLockout(context: ProjectContext, entries: readonly IpAllowlistEntry[]): void {
  if (context.caller.kind !== 'user' || context.clientIp === undefined) return;
  if (!isAllowed(context.clientIp, entries)) {
    throw invalid(
      `this change would block your own address (${context.clientIp}) from the console`,
      'Add an entry that covers your current address first.',
    );
  }
}

function sameList(a: readonly string[], b: readonly string[]): boolean {
  return a.length === b.length && a.every((value, i) => value === b[i]);
}
