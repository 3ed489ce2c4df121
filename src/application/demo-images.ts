import sharp from 'sharp';

/** Open Graph's recommended size (spec: og_image, 1200x630). */
export const DEMO_IMAGE_WIDTH = 1200;
export const DEMO_IMAGE_HEIGHT = 630;

/** Two colours per picture: the background and its shapes. */
const PALETTES: ReadonlyArray<readonly [string, string]> = [
  ['#1f3a5f', '#f2b134'],
  ['#2d6a4f', '#e9f5db'],
  ['#6a2c70', '#f08a5d'],
  ['#264653', '#e76f51'],
  ['#3d405b', '#81b29a'],
  ['#0b3954', '#bfd7ea'],
  ['#5f0f40', '#fb8b24'],
  ['#283618', '#dda15e'],
];

/**
 * A JPEG of 1200x630 for the demo's blog entries, drawn here (no network, no fonts: shapes only, so that
 * it renders the same wherever sharp runs), different for each index.
 */
export async function demoImage(index: number): Promise<Buffer> {
  const [background, ink] = PALETTES[index % PALETTES.length]!;
  const circles = Array.from({ length: 6 }, (_, i) => {
    const x = 140 + ((index * 97 + i * 193) % 920);
    const y = 90 + ((index * 61 + i * 131) % 450);
    const r = 40 + ((index * 13 + i * 29) % 110);
    return `<circle cx="${x}" cy="${y}" r="${r}" fill="${ink}" fill-opacity="${(0.25 + (i % 3) * 0.2).toFixed(2)}"/>`;
  }).join('');
  const svg = `<svg xmlns="http://www.w3.org/2000/svg" width="${DEMO_IMAGE_WIDTH}" height="${DEMO_IMAGE_HEIGHT}">
<rect width="100%" height="100%" fill="${background}"/>${circles}
<rect x="80" y="${DEMO_IMAGE_HEIGHT - 140}" width="${360 + (index % 5) * 90}" height="24" rx="12" fill="${ink}"/>
<rect x="80" y="${DEMO_IMAGE_HEIGHT - 100}" width="${220 + (index % 3) * 80}" height="16" rx="8" fill="${ink}" fill-opacity="0.6"/>
</svg>`;
  return sharp(Buffer.from(svg)).jpeg({ quality: 82, mozjpeg: true }).toBuffer();
}
