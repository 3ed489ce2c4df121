/** The coarse kinds the media list filters on (`type=image|video|audio|document`). */
export const MEDIA_KINDS = ['image', 'video', 'audio', 'document'] as const;
export type MediaKind = (typeof MEDIA_KINDS)[number];

/** image/*, video/*, audio/* by their top-level type; everything else (PDF, text, office files, archives) is a document. */
export function mediaKindOf(mimeType: string): MediaKind {
  const top = mimeType.split('/', 1)[0]!.toLowerCase();
  return top === 'image' || top === 'video' || top === 'audio' ? top : 'document';
}
