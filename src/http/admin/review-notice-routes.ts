import type { Router } from '@koa/router';
import { newRouter } from '../router.ts';
import type { Context } from 'koa';
import { z } from 'zod';
import type { ContactForms } from '../../contact-forms/contact-forms.ts';
import { sealReviewChatUrl } from '../../review-notices/review-chat-url.ts';
import { forbidden, notFound } from '../errors/error-factory.ts';
import { type ApiRegistry, wrote } from './api-registry.ts';
import { type AdminDeps, principalOf, projectOf } from './admin-context.ts';
import { accessQueries } from '../../../projections/access-queries.ts';
import { projectionsFolding } from '../../../projections/index.ts';

const preferencesSchema = z.object({
  reviewNotices: z.boolean().describe('E-mails about the review workflow: revisions submitted (tenant_admins), and the outcome of your own revisions. On unless turned off.'),
});

const chatBody = z.object({
  chatWebhookUrl: z.string().max(2000).nullable().describe('A Slack-compatible incoming-webhook URL (https; Standard plan and above), or null to stop posting.'),
});

const chatSchema = z.object({
  chatWebhookUrl: z.string().nullable().describe('Scheme and host only (the path is the credential), or null.'),
});


/**
 * Review notices' settings: each console user's own opt-out (/me/notice-preferences), and the project's
 * review chat webhook (/project/review-notices, tenant_admin sessions; the URL is sealed with SECRETS_KEY and
 * shown by scheme and host). The notices themselves are sent by the review-notice outbox.
 */
export function reviewNoticeRoutes(deps: AdminDeps, api: ApiRegistry, contact: ContactForms | undefined): Router {
  const router = newRouter();
  const accessModel = accessQueries(deps.reader);
  const { access } = deps;
  const sessionUser = (ctx: Context): string => {
    const principal = principalOf(ctx);
    if (principal.kind !== 'user') throw forbidden('Notice preferences belong to console users; agent keys receive no notices.', { hint: 'Sign in as the user.' });
    return principal.userId;
  };

  api.add(router, { method: 'get', path: '/me/notice-preferences', operationId: 'getNoticePreferences', permission: 'none', summary: 'The signed-in user\'s notice preferences (sessions only)', tag: 'Members', responses: { 200: { description: 'The preferences', schema: preferencesSchema } }, errors: {} }, async (ctx) => {
    const user = await accessModel.user(sessionUser(ctx));
    if (!user) throw notFound('No such user.');
    ctx.body = { reviewNotices: user.reviewNotices !== false };
  });

  api.add(router, { method: 'put', path: '/me/notice-preferences', operationId: 'setNoticePreferences', permission: 'none', summary: 'Turn the signed-in user\'s review notice e-mails on or off (sessions only; every change is in the audit log)', tag: 'Members', body: preferencesSchema, bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'The preferences after the change', schema: preferencesSchema } }, errors: {} }, async (ctx, { body }) => {
    const result = await access.setNoticePreferences(principalOf(ctx), sessionUser(ctx), { reviewNotices: body.reviewNotices });
    wrote(ctx, result.position, ['access']);
    ctx.body = { reviewNotices: result.reviewNotices };
  });

  api.add(router, { method: 'get', path: '/project/review-notices', operationId: 'getReviewNoticeSettings', permission: 'project.settings.change', summary: 'Where review notices are also posted: the project\'s review chat webhook (scheme and host), or null', tag: 'Project', responses: { 200: { description: 'The review notice settings', schema: chatSchema } }, errors: {} }, async (ctx) => {
    const doc = await accessModel.project(projectOf(ctx).projectId);
    ctx.body = { chatWebhookUrl: doc?.reviewNoticeChat ?? null };
  });

  api.add(router, { method: 'put', path: '/project/review-notices', operationId: 'setReviewNoticeSettings', permission: 'project.settings.change', summary: 'Post review notices to a chat webhook too (Standard plan and above), or stop with null (tenant_admin session only)', tag: 'Project', body: chatBody, bodyLimitBytes: 16 * 1024, responses: { 200: { description: 'The review notice settings after the change', schema: chatSchema } }, errors: { 403: ['PLAN_REQUIRED'] } }, async (ctx, { body }) => {
    const caller = principalOf(ctx);
    const projectId = projectOf(ctx).projectId;
    const url = body.chatWebhookUrl === null || body.chatWebhookUrl.trim() === '' ? null : body.chatWebhookUrl;
    if (url !== null && !contact) throw notFound('Chat notices are not available in this process.');
    const result = await access.setReviewNoticeChat(caller, projectId, url === null ? null : sealReviewChatUrl(contact!.secrets, projectId, url));
    wrote(ctx, result.position, projectionsFolding('project.review-notice-chat-changed'));
    ctx.body = { chatWebhookUrl: result.value };
  });

  return router;
}
