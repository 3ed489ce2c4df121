import type { Router } from '@koa/router';
import type { Context } from 'koa';
import { z } from 'zod';
import { newRouter } from '../router.ts';
import { rateLimited } from '../errors/error-factory.ts';
import { ROLE_NAMES, type UserRole } from '../../domain/principal.ts';
import type { InvitationLink } from '../../application/access-service.ts';
import type { MailTransport } from '../../mail/mail-transport.ts';
import { invitationMessage } from '../../invitations/invitation-message.ts';
import { clientIp } from '../../contact-forms/client-ip.ts';
import { type ApiRegistry, wrote } from './api-registry.ts';
import { actingProject, type AdminDeps, idempotencyKeyOf, principalOf } from './admin-context.ts';
import { idempotentCreate } from './idempotent-create.ts';
import { isUuid } from './request-body.ts';
import { notFound } from '../errors/error-factory.ts';
import { accessQueries } from '../../../projections/access-queries.ts';

/** Where invitations are mailed from, and the console their links open. */
export interface InvitationMail {
  transport: MailTransport;
  mailFrom: string;
  /** CONSOLE_URL, else the service's own /console (read when a message is made: the listening URL is known then). */
  consoleBase(): string;
}

const inviteBody = z.object({
  email: z.string().min(3).max(254),
  role: z.enum(ROLE_NAMES),
  roleId: z.uuid().nullable().optional().describe("One of the organisation's custom roles (GET /roles), held with role tenant_user"),
  idempotencyKey: z.string().optional(),
});

const acceptBody = z.object({
  token: z.string().min(1).max(200).describe('The token of the invitation\'s link (after #, as the e-mail gives it).'),
  password: z.string().min(1).max(1024),
});

const USER_ROLES = ['tenant_admin', 'tenant_user'] as const;

const invitedSchema = z
  .object({
    id: z.uuid(),
    tenantId: z.uuid(),
    email: z.string(),
    role: z.enum(USER_ROLES),
    roleId: z.uuid().nullable().optional().describe("The organisation's custom role the invitee will hold; null: none"),
    invitationExpiresAt: z.string().describe('Until when the link works (7 days).'),
    mailed: z.boolean().describe('Whether the e-mail was handed to the mail server (or written to DATA_DIR/mail).'),
    mailError: z.string().optional().describe('Why it was not: the invitation stands; send it again once mail works.'),
  })
  .meta({ id: 'Invitation' });

const acceptedSchema = z.object({ email: z.string() }).meta({ id: 'InvitationAccepted' });

/**
 * Invitations by e-mail (issue 44): a tenant admin invites a person by address and role; the service creates the
 * user with no password anyone knows and mails a link that works once, for 7 days, to choose one. The link's
 * secret is mailed and never stored (the log keeps its SHA-256). Sending again gives a new link and voids the
 * older one. The person accepts without a session: POST /auth/invitations/accept, throttled per address.
 */
export function invitationRoutes(deps: AdminDeps, api: ApiRegistry, mail: InvitationMail | undefined): { open: Router; authenticated: Router } {
  const open = newRouter();
  const router = newRouter();
  const accessModel = accessQueries(deps.reader);
  const { access } = deps;

  /** Mails the invitation; a failure is answered beside the invitation (which stands), never as an error. */
  const send = async (ctx: Context, user: { userId: string; email: string; role: UserRole }, link: InvitationLink): Promise<{ mailed: boolean; mailError?: string }> => {
    if (!mail) return { mailed: false, mailError: 'No mail transport is configured in this process.' };
    const caller = principalOf(ctx);
    const inviter = caller.kind === 'user' ? await accessModel.user(caller.userId) : null;
    const message = invitationMessage({ userId: user.userId, to: user.email, invitedBy: inviter?.email ?? null, role: user.role, token: link.token, tokenHash: link.invitation.tokenHash, expiresAt: link.expiresAt, consoleBase: mail.consoleBase(), mailFrom: mail.mailFrom, now: deps.clock.now() });
    try {
      const receipt = await mail.transport.send(message);
      if (receipt.rejected.length > 0) return { mailed: false, mailError: `The mail server refused ${receipt.rejected.join(', ')}.` };
      return { mailed: true };
    } catch (error) {
      deps.logger.warn({ err: error, userId: user.userId }, 'invitation: the e-mail could not be sent; the invitation stands and can be sent again');
      return { mailed: false, mailError: (error as Error).message };
    }
  };

  api.add(
    router,
    {
      method: 'post',
      path: '/users/invitations',
      operationId: 'inviteUser', permission: 'members.invite',
      summary: 'Invite a person to the tenant by e-mail (tenant_admin session; agent keys may never invite members): the user is created without a password and mailed a link, valid 7 days and once, to choose one (409 when the e-mail is taken)',
      tag: 'Members',
      body: inviteBody,
      bodyLimitBytes: 16 * 1024,
      responses: { 201: { description: 'The invited user, and whether the e-mail went out', schema: invitedSchema } },
      errors: { 409: ['CONFLICT'] },
    },
    async (ctx, { body }) => {
      const caller = principalOf(ctx);
      const tenantId = caller.tenantId;
      // A replay answers what the first request did, without a second e-mail (the link is in the first only).
      const answer = await idempotentCreate(deps, ctx, { scope: `tenant:${tenantId}`, operation: 'invite_user', key: idempotencyKeyOf(ctx, body), request: { email: body.email, role: body.role, roleId: body.roleId ?? null }, ids: ['userId'] }, async (ids) => {
        const made = await access.inviteUser(caller, { tenantId, email: body.email, role: body.role, roleId: body.roleId ?? null, userId: ids['userId']!, ...actingProject(ctx) });
        wrote(ctx, made.position, ['access']);
        const sent = await send(ctx, made, made.invitation);
        return { id: made.userId, tenantId: made.tenantId, email: made.email, role: made.role, roleId: made.roleId, invitationExpiresAt: made.invitation.expiresAt, ...sent };
      });
      ctx.status = 201;
      ctx.body = answer;
    },
  );

  api.add(
    router,
    {
      method: 'post',
      path: '/users/:userId/invitation',
      operationId: 'inviteUserAgain', permission: 'members.invite',
      summary: 'Send a pending invitation again with a new link (the earlier link stops working); 409 once it was accepted or for a user added with a password',
      tag: 'Members',
      responses: { 200: { description: 'The invitation, and whether the e-mail went out', schema: invitedSchema } },
      errors: { 404: ['NOT_FOUND'], 409: ['CONFLICT'] },
    },
    async (ctx) => {
      const caller = principalOf(ctx);
      const userId = ctx.params['userId'];
      if (!isUuid(userId)) throw notFound(`No user ${userId}.`);
      const again = await access.inviteAgain(caller, userId);
      wrote(ctx, again.position, ['access']);
      const sent = await send(ctx, again, again.invitation);
      ctx.body = { id: again.userId, tenantId: again.tenantId, email: again.email, role: again.role, invitationExpiresAt: again.invitation.expiresAt, ...sent };
    },
  );

  api.add(
    open,
    {
      method: 'post',
      path: '/auth/invitations/accept',
      operationId: 'acceptInvitation',
      permission: 'none',
      summary: 'Choose a password with an invitation\'s link token (no session): the account can then sign in; the link is spent. 401 for a link that is unknown, used, replaced or expired; 429 after repeated failures from one address',
      tag: 'Sessions',
      auth: 'none',
      body: acceptBody,
      bodyLimitBytes: 16 * 1024,
      responses: { 200: { description: 'The account\'s e-mail, to sign in with', schema: acceptedSchema } },
      errors: { 401: ['UNAUTHORIZED'], 429: ['RATE_LIMITED'] },
    },
    async (ctx, { body }) => {
      // Guessing tokens costs time: failures are throttled as sign-ins are, per address and per invited account.
      const decision = deps.loginThrottle.begin(`invitation:${body.token.split('.')[0]!.slice(0, 36)}`, clientIp(ctx));
      if (!decision.allowed) throw rateLimited(decision.retryAfterSeconds, { message: 'Too many failed attempts: wait before trying again.' });
      const accepted = await access.acceptInvitation(body.token, body.password);
      decision.attempt.succeeded();
      wrote(ctx, accepted.position, ['access']);
      ctx.body = { email: accepted.email };
    },
  );

  return { open, authenticated: router };
}
