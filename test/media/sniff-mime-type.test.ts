import fs from 'node:fs';
import path from 'node:path';
import { expect } from 'chai';
import { sniffMimeType } from '../../src/media/sniff-mime-type.ts';
import { imageMetadata, isWebpConvertible } from '../../src/media/image-metadata.ts';
import { MediaRejectedError } from '../../src/media/media-errors.ts';
import { tempDir } from '../support/temp-dir.ts';
import { animatedGif, jpeg, png } from './support.ts';
import sharp from 'sharp';

describe('sniffMimeType and imageMetadata: the type comes from the bytes', () => {
  const dir = tempDir('annals-sniff-');
  const file = (name: string, bytes: Uint8Array | string) => {
    const p = path.join(dir, name);
    fs.writeFileSync(p, bytes);
    return p;
  };

  it('recognises images by signature whatever the name', async () => {
    expect(await sniffMimeType(file('a.txt', await png(8, 8)))).to.equal('image/png');
    expect(await sniffMimeType(file('b.png', await jpeg(8, 8)))).to.equal('image/jpeg');
    expect(await sniffMimeType(file('c', await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).gif().toBuffer()))).to.equal('image/gif');
    expect(await sniffMimeType(file('d', await sharp({ create: { width: 4, height: 4, channels: 3, background: 'red' } }).webp().toBuffer()))).to.equal('image/webp');
  });

  it('recognises SVG documents (with declaration, comment, doctype) as image/svg+xml', async () => {
    expect(await sniffMimeType(file('e.svg', '<svg xmlns="http://www.w3.org/2000/svg" width="10" height="20"/>'))).to.equal('image/svg+xml');
    expect(await sniffMimeType(file('f.xml', '<?xml version="1.0"?>\n<!-- drawn -->\n<!DOCTYPE svg PUBLIC "-//W3C//DTD SVG 1.1//EN" "http://www.w3.org/Graphics/SVG/1.1/DTD/svg11.dtd">\n<svg xmlns="http://www.w3.org/2000/svg" width="3" height="4"></svg>'))).to.equal('image/svg+xml');
  });

  it('falls back to text/plain for valid UTF-8 and application/octet-stream otherwise', async () => {
    expect(await sniffMimeType(file('g.bin', 'hello, wörld ✓\nline two'))).to.equal('text/plain');
    expect(await sniffMimeType(file('h.txt', Buffer.from([0x68, 0x69, 0xff, 0xfe, 0x00, 0x01])))).to.equal('application/octet-stream');
    expect(await sniffMimeType(file('i.txt', Buffer.from('text with a NUL\u0000 byte')))).to.equal('application/octet-stream');
    // Invalid UTF-8 late in a large file is still found (the whole file is checked, streamed).
    const big = Buffer.alloc(300_000, 0x61);
    big[299_000] = 0xc3;
    big[299_001] = 0x28;
    expect(await sniffMimeType(file('j.txt', big))).to.equal('application/octet-stream');
  });

  it('reads image sizes (EXIF orientation applied) and multi-frame images', async () => {
    expect(await imageMetadata(file('k.png', await png(30, 20)), 'image/png')).to.deep.equal({ width: 30, height: 20, animated: false });
    const rotated = await sharp({ create: { width: 40, height: 10, channels: 3, background: 'blue' } }).jpeg().withMetadata({ orientation: 6 }).toBuffer();
    expect(await imageMetadata(file('l.jpg', rotated), 'image/jpeg')).to.deep.equal({ width: 10, height: 40, animated: false });
    const animated = await animatedGif();
    const meta = await imageMetadata(file('m.gif', animated), 'image/gif');
    expect(meta.animated).to.equal(true);
    expect(isWebpConvertible({ mimeType: 'image/gif', animated: true })).to.equal(false);
    expect(isWebpConvertible({ mimeType: 'image/gif', animated: false })).to.equal(true);
    expect(isWebpConvertible({ mimeType: 'image/svg+xml', animated: false })).to.equal(false);
    expect(isWebpConvertible({ mimeType: 'image/webp', animated: false })).to.equal(false);
    expect(await imageMetadata(file('n.txt', 'text'), 'text/plain')).to.deep.equal({ width: null, height: null, animated: false });
  });

  it('refuses an image whose header cannot be read', async () => {
    const broken = Buffer.concat([(await png(8, 8)).subarray(0, 16), Buffer.alloc(40, 0x11)]);
    const p = file('o.png', broken);
    expect(await sniffMimeType(p)).to.equal('image/png');
    let error: unknown;
    try {
      await imageMetadata(p, 'image/png');
    } catch (e) {
      error = e;
    }
    expect(error).to.be.instanceOf(MediaRejectedError);
  });
});
