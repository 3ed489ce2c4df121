import { invalid } from '../domain/domain-error.ts';
import { chatUrlProblem, displayChatUrl } from '../domain/contact-form/contact-form-settings.ts';
import type { SealedChatWebhook } from '../domain/access/project-decider.ts';
import type { SecretBox } from '../security/secret-box.ts';

/**
 * A project's review chat webhook: a Slack-compatible incoming-webhook URL, checked as contact forms' chat
 * URLs are (https, a host, no credentials), sealed with SECRETS_KEY bound to the project (the URL is a
 * credential: the log and read models hold it sealed, lists show scheme and host).
 */
const context = (projectId: string) => `project:${projectId}:review-chat-webhook`;

export function sealReviewChatUrl(secrets: SecretBox, projectId: string, url: string): SealedChatWebhook {
  const value = url.trim();
  const problem = chatUrlProblem(value);
  if (problem) throw invalid(`chatWebhookUrl: ${problem}`);
  return { sealedUrl: secrets.seal(value, context(projectId)), display: displayChatUrl(value) };
}

export function openReviewChatUrl(secrets: SecretBox, projectId: string, sealed: SealedChatWebhook): string {
  return secrets.open(sealed.sealedUrl, context(projectId));
}
