import type sharp from 'sharp';
import { loadSharp } from './load-sharp.ts';
import { MediaRejectedError } from './media-errors.ts';

/** Image types sharp reads here (its prebuilt libvips): their size is recorded, and a file sharp cannot read is refused. */
const READABLE_IMAGES = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/webp', 'image/tiff', 'image/avif', 'image/svg+xml']);

/** Raster images that are served as WebP to clients asking for it (not SVG, not WebP itself, never animated). */
const WEBP_CONVERTIBLE = new Set(['image/png', 'image/jpeg', 'image/gif', 'image/tiff', 'image/avif']);

export interface ImageMetadata {
  width: number | null;
  height: number | null;
  animated: boolean;
}

/**
 * Width and height (EXIF orientation applied) and whether the image has more than one frame, read from the
 * file's header by sharp. Other files, and image types sharp does not read (icons, BMP, PSD), have none. An
 * image of a readable type whose header sharp cannot parse is refused as unreadable.
 */
export async function imageMetadata(file: string, mimeType: string): Promise<ImageMetadata> {
  if (!READABLE_IMAGES.has(mimeType)) return { width: null, height: null, animated: false };
  let metadata: Awaited<ReturnType<ReturnType<typeof sharp>['metadata']>>;
  try {
    metadata = await (await loadSharp())(file).metadata();
  } catch (error) {
    throw new MediaRejectedError(`The file looks like ${mimeType} but cannot be read as an image (${(error as Error).message}).`, 'Upload an intact file.');
  }
  const width = metadata.autoOrient?.width ?? metadata.width;
  const height = metadata.autoOrient?.height ?? metadata.height;
  if (!width || !height) throw new MediaRejectedError(`The file looks like ${mimeType} but has no readable size.`, 'Upload an intact file.');
  return { width, height, animated: (metadata.pages ?? 1) > 1 };
}

export function isWebpConvertible(asset: { mimeType: string; animated: boolean }): boolean {
  return WEBP_CONVERTIBLE.has(asset.mimeType) && !asset.animated;
}
