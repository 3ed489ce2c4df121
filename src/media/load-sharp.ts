import type Sharp from 'sharp';

let loading: Promise<typeof Sharp> | undefined;

/**
 * sharp (libvips), loaded on the first image it is asked to read or convert rather than when the service
 * starts: ~0.15 s of CPU and a native library that a start, a CLI run or a service that is sent no image
 * would otherwise pay for.
 */
export function loadSharp(): Promise<typeof Sharp> {
  loading ??= import('sharp').then((module) => module.default);
  return loading;
}
