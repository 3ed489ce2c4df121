import { SMTPServer, type SMTPServerOptions } from 'smtp-server';
import { simpleParser, type ParsedMail } from 'mailparser';

/** One message as a real SMTP server received it: the envelope, the raw bytes and mailparser's reading of them. */
export interface ReceivedMail {
  envelope: { from: string; to: string[] };
  raw: Buffer;
  parsed: ParsedMail;
}

export interface SmtpPeer {
  url: string;
  port: number;
  /** Messages accepted so far (the server answered 250 to DATA). */
  messages: ReceivedMail[];
  /** Recipients the server refuses at RCPT TO (550). */
  refuse: Set<string>;
  /** Resolves when at least `count` messages have been accepted. */
  waitForCount(count: number, timeoutMs?: number): Promise<ReceivedMail[]>;
  close(): Promise<void>;
}

/**
 * A real SMTP server (smtp-server) on loopback, as ENVIRONMENT.md describes: no TLS, AUTH optional (or
 * required with `auth`), every accepted message parsed with mailparser.
 */
export async function startSmtpPeer(options: { auth?: { user: string; pass: string } } = {}): Promise<SmtpPeer> {
  const messages: ReceivedMail[] = [];
  const refuse = new Set<string>();
  const waiters: Array<() => void> = [];
  const config: SMTPServerOptions = {
    authOptional: !options.auth,
    disabledCommands: options.auth ? ['STARTTLS'] : ['AUTH', 'STARTTLS'],
    allowInsecureAuth: true,
    logger: false,
    onAuth(auth, _session, callback) {
      if (options.auth && auth.username === options.auth.user && auth.password === options.auth.pass) callback(null, { user: auth.username });
      else callback(new Error('Invalid username or password'));
    },
    onRcptTo(address, _session, callback) {
      if (refuse.has(address.address.toLowerCase())) {
        const error = new Error(`mailbox ${address.address} unavailable`) as Error & { responseCode: number };
        error.responseCode = 550;
        callback(error);
        return;
      }
      callback();
    },
    onData(stream, session, callback) {
      const chunks: Buffer[] = [];
      stream.on('data', (c: Buffer) => chunks.push(c));
      stream.on('end', () => {
        const raw = Buffer.concat(chunks);
        simpleParser(raw).then(
          (parsed) => {
            messages.push({
              envelope: { from: session.envelope.mailFrom ? session.envelope.mailFrom.address : '', to: session.envelope.rcptTo.map((r) => r.address) },
              raw,
              parsed,
            });
            callback();
            for (const wake of waiters.splice(0)) wake();
          },
          (error: Error) => callback(error),
        );
      });
    },
  };
  const server = new SMTPServer(config);
  const port = await new Promise<number>((resolve, reject) => {
    server.on('error', reject);
    server.listen(0, '127.0.0.1', () => resolve((server.server.address() as { port: number }).port));
  });
  const credentials = options.auth ? `${encodeURIComponent(options.auth.user)}:${encodeURIComponent(options.auth.pass)}@` : '';
  return {
    url: `smtp://${credentials}127.0.0.1:${port}`,
    port,
    messages,
    refuse,
    async waitForCount(count, timeoutMs = 10_000) {
      const deadline = Date.now() + timeoutMs;
      while (messages.length < count) {
        if (Date.now() > deadline) throw new Error(`expected ${count} messages, got ${messages.length} in ${timeoutMs} ms`);
        await new Promise<void>((resolve) => {
          waiters.push(resolve);
          setTimeout(resolve, 100);
        });
      }
      return messages;
    },
    close: () => new Promise<void>((resolve) => server.close(() => resolve())),
  };
}
