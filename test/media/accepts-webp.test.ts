import { expect } from 'chai';
import { acceptsWebp } from '../../src/media/accepts-webp.ts';

describe('acceptsWebp', () => {
  it('is true when image/webp is named with a quality above 0', () => {
    for (const header of ['image/webp', 'image/avif,image/webp,image/apng,image/svg+xml,image/*,*/*;q=0.8', 'IMAGE/WEBP', 'image/png, image/webp;q=0.5', 'image/webp ; Q=0.001', 'image/webp;q=oops']) {
      expect(acceptsWebp(header), header).to.equal(true);
    }
  });
  it('is false without it, for wildcards only, and for q=0', () => {
    for (const header of [undefined, '', '*/*', 'image/*', 'image/png,image/svg+xml,image/*;q=0.8,*/*;q=0.5', 'image/webp;q=0', 'image/webp;q=0.000, */*', 'image/webpx', 'application/json']) {
      expect(acceptsWebp(header), String(header)).to.equal(false);
    }
  });
});
