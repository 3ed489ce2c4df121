import { cleanupTempDirs } from './temp-dir.ts';
import { installResponseValidation } from './response-validation.ts';
import { stopMinioServer } from './minio-server.ts';
import { stopMongoServer } from './mongo-server.ts';

/** Mocha root hooks, loaded for every run through .mocharc.json. */
export const mochaHooks = {
  beforeAll(): void {
    // Every admin and public answer the tests receive is checked against the served OpenAPI documents.
    installResponseValidation();
  },
  async afterAll(): Promise<void> {
    cleanupTempDirs();
    // The MongoDB suites' shared server (a container or FerretDB), if one was started.
    await stopMongoServer();
    await stopMinioServer();
  },
};
