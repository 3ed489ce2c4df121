/**
 * Credentials in URLs and connection strings (`scheme://user:password@host`) replaced by `***`, so that
 * EventStoreDB / MongoDB / SMTP / S3 addresses can appear in log lines and error messages.
 *
 * Works on a bare URL or on any text containing URLs (an error message, a stack trace, a JSON log line).
 * The user-info part ends at the last `@` before the host. It never spans whitespace, quotes, backslashes,
 * `/`, `?` or `#` (none may appear unencoded in user-info), so applied to JSON text it stays inside one string
 * and keeps the JSON valid. A password must be percent-encoded, as the drivers require anyway.
 *
 *   redactUrl('mongodb://app:s3cret@db1:27017,db2:27017/annals') === 'mongodb://***@db1:27017,db2:27017/annals'
 *   redactUrl('esdb://admin:changeit@localhost:2113?tls=false')   === 'esdb://***@localhost:2113?tls=false'
 */
export function redactUrl(text: string): string {
  if (!text.includes('@')) return text;
  return text.replace(CREDENTIALS_IN_URL, '$1***@');
}

// scheme://  then user-info segments separated by '@', up to the last '@' before the host.
const CREDENTIALS_IN_URL = /\b([a-z][a-z0-9+.-]*:\/\/)[^\s@/?#"'<>\\]*(?:@[^\s@/?#"'<>\\]*)*@/gi;
