/**
 * The embeddable player address of a YouTube or Vimeo video address, or undefined for any other address: the
 * providers the video_embed field previews and the rich-text `embed` node holds (and the console's
 * Content-Security-Policy admits as frames). Accepted: youtube.com/watch?v=ID, youtube.com/embed/ID,
 * youtube.com/shorts/ID, youtu.be/ID, youtube-nocookie.com/embed/ID, vimeo.com/ID and player.vimeo.com/video/ID,
 * over http or https. YouTube is embedded from youtube-nocookie.com.
 */
export function embedPlayerUrl(url: string): string | undefined {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return undefined;
  }
  if (parsed.protocol !== 'https:' && parsed.protocol !== 'http:') return undefined;
  const host = parsed.hostname.toLowerCase().replace(/^(www|m)\./, '');
  const youtube = (id: string | null | undefined) => (id && /^[\w-]{1,64}$/.test(id) ? `https://www.youtube-nocookie.com/embed/${id}` : undefined);
  if (host === 'youtube.com') return youtube(parsed.pathname === '/watch' ? parsed.searchParams.get('v') : /^\/(?:embed|shorts)\/([^/]+)/.exec(parsed.pathname)?.[1]);
  if (host === 'youtube-nocookie.com') return youtube(/^\/embed\/([^/]+)/.exec(parsed.pathname)?.[1]);
  if (host === 'youtu.be') return youtube(/^\/([^/]+)/.exec(parsed.pathname)?.[1]);
  if (host === 'vimeo.com') {
    const id = /^\/(\d{1,20})(?:\/|$)/.exec(parsed.pathname)?.[1];
    return id ? `https://player.vimeo.com/video/${id}` : undefined;
  }
  if (host === 'player.vimeo.com') {
    const id = /^\/video\/(\d{1,20})(?:\/|$)/.exec(parsed.pathname)?.[1];
    return id ? `https://player.vimeo.com/video/${id}` : undefined;
  }
  return undefined;
}
