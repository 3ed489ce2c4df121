import type { MailMessage } from '../mail/mail-transport.ts';
import { mailDomain } from '../contact-forms/notice-messages.ts';
import { escapeHtml } from '../html-escape.ts';

/**
 * The e-mail that invites a person to the console. Pure: everything comes in the arguments. The link carries the
 * invitation's token in its fragment (`#…`), which browsers never send to a server, so it stays out of access
 * logs and Referer headers; the console's accept page reads it there. The Message-ID is fixed per invitation.
 */
export interface InvitationFacts {
  userId: string;
  to: string;
  /** The e-mail of the administrator who invited, or null when an operator did. */
  invitedBy: string | null;
  role: 'tenant_admin' | 'tenant_user';
  /** The link token, `{userId}.{secret}`, in clear: in this message only. */
  token: string;
  /** The SHA-256 (hex) of the link's secret, as the log keeps it: names this invitation's message. */
  tokenHash: string;
  expiresAt: string;
  /** The console's base URL (CONSOLE_URL, else the service's own /console). */
  consoleBase: string;
  mailFrom: string;
  now: Date;
}

/** The page that accepts an invitation: console/src/app.tsx routes /accept-invitation. */
export function invitationLink(consoleBase: string, token: string): string {
  return `${consoleBase.replace(/\/+$/, '')}/accept-invitation#${encodeURIComponent(token)}`;
}

export function invitationMessage(facts: InvitationFacts): MailMessage {
  const link = invitationLink(facts.consoleBase, facts.token);
  const who = facts.invitedBy ? `${facts.invitedBy} invited you` : 'You are invited';
  const role = facts.role === 'tenant_admin' ? 'an administrator' : 'an editor';
  const expires = `${facts.expiresAt.replace('T', ' ').replace(/\.\d{3}Z$/, '')} UTC`;
  const text = [
    `${who} to the annals console as ${role}.`,
    '',
    'Choose your password to sign in:',
    link,
    '',
    `The link works once and until ${expires}. If you did not expect this invitation, you can ignore this message: nothing happens without the link.`,
  ].join('\n');
  const html = `<p>${escapeHtml(who)} to the annals console as ${escapeHtml(role)}.</p>
<p><a href="${escapeHtml(link)}">Choose your password to sign in</a></p>
<p>The link works once and until ${escapeHtml(expires)}. If you did not expect this invitation, you can ignore this message: nothing happens without the link.</p>`;
  return {
    // One per invitation (a message sent again after a crash is the same one; a new invitation is another), and
    // nothing of the secret.
    messageId: `<${facts.userId}.invitation-${facts.tokenHash.slice(0, 16)}@${mailDomain(facts.mailFrom)}>`,
    from: facts.mailFrom,
    to: [facts.to],
    subject: 'Your invitation to the annals console',
    text,
    html,
    date: facts.now,
  };
}
