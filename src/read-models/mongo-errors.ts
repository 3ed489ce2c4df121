/**
 * What the MongoDB read-model adapter needs to say about its server without I/O: driver errors as the port's
 * (an unreachable server is ReadModelUnavailableError), the database a URL names, and messages cleaned of
 * anything in a URL that could be a secret.
 */
import {
  MongoBulkWriteError,
  MongoClientClosedError,
  MongoError,
  MongoNetworkError,
  MongoNotConnectedError,
  MongoOperationTimeoutError,
  MongoServerClosedError,
  MongoServerError,
  MongoServerSelectionError,
  MongoTopologyClosedError,
  type Db,
} from 'mongodb';
import { ReadModelError, ReadModelUnavailableError } from './read-model-store.ts';

export { databaseFromUrl } from './mongo-url.ts';

export const DUPLICATE_KEY = 11000;

/** Server error codes that say "this server cannot serve now", not "this request is wrong". */
const UNAVAILABLE_CODES = new Set([
  6, // HostUnreachable
  7, // HostNotFound
  89, // NetworkTimeout
  91, // ShutdownInProgress
  189, // PrimarySteppedDown
  9001, // SocketException
  10107, // NotWritablePrimary
  11600, // InterruptedAtShutdown
  11602, // InterruptedDueToReplStateChange
  13435, // NotPrimaryNoSecondaryOk
  13436, // NotPrimaryOrSecondary
]);

export function translateError(error: unknown, what: string, db: Db): unknown {
  if (error instanceof ReadModelError) return error;
  const inner = unwrap(error);
  if (isUnavailableError(inner)) {
    return new ReadModelUnavailableError(`MongoDB at ${describeDatabase(db)} is unavailable (${what}): ${errorMessage(inner)}`, {
      cause: error,
    });
  }
  if (error instanceof MongoError) {
    return new ReadModelError(`MongoDB failed to ${what} in ${describeDatabase(db)}: ${errorMessage(error)}`, { cause: error });
  }
  return error;
}

/** A bulk write that failed for a reason other than its writes (network, closed client) wraps that error. */
export function unwrap(error: unknown): unknown {
  if (error instanceof MongoBulkWriteError && error.errorResponse instanceof Error) return error.errorResponse;
  return error;
}

/** Whether the error says the server cannot be reached or cannot serve now (not that the request is wrong). */
export function isUnavailableError(error: unknown): boolean {
  if (
    error instanceof MongoNetworkError ||
    error instanceof MongoServerSelectionError ||
    error instanceof MongoTopologyClosedError ||
    error instanceof MongoNotConnectedError ||
    error instanceof MongoClientClosedError ||
    error instanceof MongoServerClosedError ||
    error instanceof MongoOperationTimeoutError
  ) {
    return true;
  }
  return error instanceof MongoServerError && typeof error.code === 'number' && UNAVAILABLE_CODES.has(error.code);
}

export function errorMessage(error: unknown): string {
  return error instanceof Error ? error.message.split('\n')[0]! : String(error);
}

/** "host:port[,host:port]/database", from the client's parsed options: never the credentials. */
export function describeDatabase(db: Db): string {
  let hosts = 'MongoDB';
  try {
    const options = db.client.options;
    hosts = options.srvHost ? `${options.srvHost} (SRV)` : options.hosts.map(String).join(',');
  } catch {
    // keep the generic name
  }
  return `${hosts}/${db.databaseName}`;
}

const SECRET_OPTION = /pass|secret|token|key|credential|authmechanismproperties/i;

/**
 * Removes whatever could be a secret of `url` from `text`: its user information (raw, decoded and
 * whole), the values of query options that may hold secrets (TLS key passwords, AWS session tokens),
 * and the user information of any MongoDB URL quoted in it.
 */
export function redactUrlSecrets(text: string, url: string): string {
  const secrets = new Set<string>();
  const rest = url.replace(/^[a-z+]+:\/\//i, '');
  const queryStart = rest.indexOf('?');
  const beforeQuery = queryStart < 0 ? rest : rest.slice(0, queryStart);
  const at = beforeQuery.lastIndexOf('@');
  if (at >= 0) {
    const userInfo = beforeQuery.slice(0, at);
    secrets.add(userInfo);
    for (const part of userInfo.split(':')) {
      secrets.add(part);
      try {
        secrets.add(decodeURIComponent(part));
      } catch {
        // undecodable: the raw form is enough
      }
    }
  }
  if (queryStart >= 0) {
    for (const pair of rest.slice(queryStart + 1).split('&')) {
      const equals = pair.indexOf('=');
      if (equals > 0 && SECRET_OPTION.test(pair.slice(0, equals))) {
        const value = pair.slice(equals + 1);
        secrets.add(value);
        try {
          secrets.add(decodeURIComponent(value));
        } catch {
          // undecodable: the raw form is enough
        }
      }
    }
  }
  let result = text;
  for (const secret of [...secrets].filter((s) => s.length >= 3).sort((a, b) => b.length - a.length)) {
    result = result.split(secret).join('***');
  }
  return result.replace(/(mongodb(?:\+srv)?:\/\/)[^@/\s]*@/gi, '$1***@');
}

