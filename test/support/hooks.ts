import { cleanupTempDirs } from './temp-dir.ts';
import { installResponseValidation } from './response-validation.ts';

/** Mocha root hooks, loaded for every run through .mocharc.json. */
export const mochaHooks = {
  beforeAll(): void {
    // Every admin and public answer the tests receive is checked against the served OpenAPI documents.
    installResponseValidation();
  },
  afterAll(): void {
    cleanupTempDirs();
  },
};
