import type { AdminFixture } from '../admin/support.ts';

export { adminSession, PASSWORD } from '../admin/support.ts';

/** The project-pinned public base of the fixture's project. */
export const pinnedBase = (f: AdminFixture) => `${f.service.url}/public/p/${f.project.projectId}/v1`;

export async function submit(base: string, slug: string, body: unknown, options: { query?: string; headers?: Record<string, string> } = {}): Promise<{ status: number; body: any; headers: Headers }> {
  const response = await fetch(`${base}/contact-forms/${slug}/submit${options.query ?? ''}`, {
    method: 'POST',
    headers: { 'content-type': 'application/json', ...options.headers },
    body: typeof body === 'string' ? body : JSON.stringify(body),
  });
  const text = await response.text();
  return { status: response.status, body: text ? JSON.parse(text) : null, headers: response.headers };
}

/** A contact form as a site would have it: name, e-mail, message, company, inquiry type. */
export const contactForm = (overrides: Record<string, unknown> = {}) => ({
  name: 'Contact us',
  slug: 'contact',
  notification_emails: ['team@example.com', 'sales@example.com'],
  reply_to_field: 'email',
  fields: [
    { key: 'name', type: 'text', label: 'Name', required: true, limits: { maxLength: 100 } },
    { key: 'email', type: 'email', label: 'E-mail', required: true },
    { key: 'company', type: 'text', label: 'Company' },
    { key: 'inquiry_type', type: 'select', label: 'Inquiry type', options: [{ value: 'sales', label: 'Sales' }, { value: 'support', label: 'Support' }] },
    { key: 'message', type: 'textarea', label: 'Message', required: true, limits: { maxLength: 2000 } },
  ],
  autoreply_enabled: true,
  autoreply_to_field: 'email',
  autoreply_subject: { en: 'Thank you, {{name}}', ja: 'お問い合わせありがとうございます' },
  autoreply_body: { en: 'Dear {{name}},\n\nthank you for your message.\nWe will answer soon.', ja: '{{name}} 様\n\nお問い合わせありがとうございます。' },
  email_signature: 'Example Shop\nhttps://shop.example.com',
  hosted_page_enabled: true,
  ...overrides,
});
