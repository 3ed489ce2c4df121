import { cleanupTempDirs } from './temp-dir.ts';

/** Mocha root hooks, loaded for every run through .mocharc.json. */
export const mochaHooks = {
  afterAll(): void {
    cleanupTempDirs();
  },
};
