import { useI18n } from '../i18n/i18n.tsx';

/** The embeddable player URL of a YouTube or Vimeo address (the CSP allows frames from these two only). */
export function embedUrlOf(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  const host = parsed.hostname.replace(/^www\./, '');
  if (host === 'youtube.com' || host === 'm.youtube.com') {
    const id = parsed.searchParams.get('v') ?? /^\/(?:embed|shorts)\/([\w-]+)/.exec(parsed.pathname)?.[1];
    return id ? `https://www.youtube-nocookie.com/embed/${encodeURIComponent(id)}` : undefined;
  }
  if (host === 'youtu.be') {
    const id = parsed.pathname.slice(1);
    return id ? `https://www.youtube-nocookie.com/embed/${encodeURIComponent(id)}` : undefined;
  }
  if (host === 'vimeo.com') {
    const id = /^\/(\d+)/.exec(parsed.pathname)?.[1];
    return id ? `https://player.vimeo.com/video/${id}` : undefined;
  }
  return undefined;
}

export function VideoField({ id, value, onChange, describedBy }: { id: string; value: unknown; onChange: (next: unknown) => void; describedBy?: string }) {
  const { t } = useI18n();
  const url = typeof value === 'string' ? value : '';
  const embed = url ? embedUrlOf(url) : undefined;
  return (
    <div className="video-field">
      <input id={id} type="url" value={url} aria-describedby={describedBy} onChange={(e) => onChange(e.target.value || undefined)} />
      {url &&
        (embed ? (
          <iframe className="video-preview" src={embed} title={t('field.videoPreview')} sandbox="allow-scripts allow-same-origin allow-presentation" referrerPolicy="no-referrer" />
        ) : (
          <p className="muted">{t('field.noVideoPreview')}</p>
        ))}
    </div>
  );
}
