import { MongoClient, type Db } from 'mongodb';
import { databaseFromUrl, errorMessage, redactUrlSecrets, unwrap } from './mongo-errors.ts';

/**
 * Connects a store kept beside the read models (the key store, the snapshot store) to the read models'
 * MongoDB: a client of its own (named `appName`), the database given, else the one the URL names, else
 * `annals`; a server-selection timeout of 10 s unless the URL names one; checked with a ping. A failure is
 * `fail(message)`, with nothing of the URL's secrets in the message.
 */
export async function connectMongoDatabase(url: string, options: { appName: string; database?: string | undefined; fail: (message: string) => Error }): Promise<{ client: MongoClient; db: Db }> {
  let client: MongoClient;
  try {
    client = new MongoClient(url, { appName: options.appName, ...(/[?&]serverSelectionTimeoutMS=/i.test(url) ? {} : { serverSelectionTimeoutMS: 10_000 }) });
  } catch (error) {
    throw options.fail(`invalid MongoDB URL: ${redactUrlSecrets(errorMessage(error), url)}`);
  }
  const db = client.db(options.database ?? databaseFromUrl(url) ?? 'annals');
  try {
    await client.connect();
    await db.command({ ping: 1 });
  } catch (error) {
    await client.close().catch(() => undefined);
    throw options.fail(`cannot connect to MongoDB: ${redactUrlSecrets(errorMessage(unwrap(error)), url)}`);
  }
  return { client, db };
}
