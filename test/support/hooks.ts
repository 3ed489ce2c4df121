import { cleanupTempDirs } from './temp-dir.ts';
import { forgetServedDocuments, installResponseValidation } from './response-validation.ts';
import { stopMinioServer } from './minio-server.ts';
import { stopMongoServer } from './mongo-server.ts';

let lastFile: string | undefined;

/** Mocha root hooks, loaded for every run through .mocharc.json. */
export const mochaHooks = {
  beforeAll(): void {
    // Every admin and public answer the tests receive is checked against the served OpenAPI documents.
    installResponseValidation();
  },
  beforeEach(this: Mocha.Context): void {
    // A new test file: the servers of the one before are gone, and their ports may be reused by this one's.
    const file = this.currentTest?.file;
    if (file !== lastFile) forgetServedDocuments();
    lastFile = file;
  },
  async afterAll(): Promise<void> {
    cleanupTempDirs();
    // The MongoDB suites' shared server (a container or FerretDB), if one was started.
    await stopMongoServer();
    await stopMinioServer();
  },
};
