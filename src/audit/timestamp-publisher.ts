/**
 * RFC 3161 timestamps of checkpoints (AUDIT_TSA_URL): the SHA-256 of each published checkpoint's signed note
 * is sent to the timestamp authority as a TimeStampReq (application/timestamp-query, with a nonce and a request
 * for the TSA's certificate); the TimeStampToken of a granted answer is kept beside the checkpoint (base64 DER),
 * so an auditor shows when the checkpoint existed with `openssl ts -verify -token_in -in token.der -data note.txt
 * -CAfile tsa.pem`. One request at a time; a newer checkpoint supersedes one not yet stamped; failures are
 * logged and tried again with the next checkpoint (at most once every `minIntervalMs`).
 *
 * The DER is small and fixed, so it is written and read here rather than through an ASN.1 library.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { Logger } from 'pino';
import type { CheckpointPublisher } from './log-checkpoints.ts';
import type { LogTreeStore, StoredCheckpoint } from './log-tree-store.ts';
import { InterruptibleDelay } from '../interruptible-delay.ts';

const SHA256_ALGORITHM = Buffer.from('300d06096086480165030402010500', 'hex');

function derLength(length: number): Buffer {
  if (length < 0x80) return Buffer.from([length]);
  const bytes: number[] = [];
  for (let n = length; n > 0; n = Math.floor(n / 256)) bytes.unshift(n % 256);
  return Buffer.from([0x80 | bytes.length, ...bytes]);
}

function der(tag: number, content: Buffer): Buffer {
  return Buffer.concat([Buffer.from([tag]), derLength(content.length), content]);
}

/**
 * The content of a DER INTEGER holding the unsigned big-endian `magnitude`: minimal, as DER requires (no leading
 * zero byte unless the next has its high bit set, which would make the number negative). A TSA that checks DER
 * strictly (OpenSSL) rejects a request whose nonce carries one zero byte too many.
 */
export function derUnsignedInteger(magnitude: Uint8Array): Buffer {
  let start = 0;
  while (start < magnitude.length - 1 && magnitude[start] === 0) start++;
  const bytes = Buffer.from(magnitude.subarray(start));
  if (bytes.length === 0) return Buffer.from([0]);
  return bytes[0]! & 0x80 ? Buffer.concat([Buffer.from([0x00]), bytes]) : bytes;
}

/** A TimeStampReq (RFC 3161 2.4.1) for a SHA-256 digest: version 1, the imprint, a positive 64-bit nonce, certReq. */
export function timestampRequest(digest: Uint8Array, nonce: Buffer = randomBytes(8)): Buffer {
  return der(0x30, Buffer.concat([der(0x02, Buffer.from([1])), der(0x30, Buffer.concat([SHA256_ALGORITHM, der(0x04, Buffer.from(digest))])), der(0x02, derUnsignedInteger(nonce)), der(0x01, Buffer.from([0xff]))]));
}

/** One DER element at `offset`: its tag, where its content is, and where the next element starts. */
function element(bytes: Buffer, offset: number): { tag: number; start: number; end: number } {
  const tag = bytes[offset]!;
  let length = bytes[offset + 1]!;
  let start = offset + 2;
  if (length & 0x80) {
    const count = length & 0x7f;
    if (count === 0 || count > 4) throw new Error('unsupported DER length');
    length = 0;
    for (let i = 0; i < count; i++) length = length * 256 + bytes[start + i]!;
    start += count;
  }
  if (start + length > bytes.length) throw new Error('truncated DER');
  return { tag, start, end: start + length };
}

/** The status and the token (ContentInfo DER) of a TimeStampResp (RFC 3161 2.4.2). */
export function parseTimestampResponse(response: Buffer): { status: number; token: Buffer | null } {
  const outer = element(response, 0);
  if (outer.tag !== 0x30) throw new Error('not a TimeStampResp');
  const statusInfo = element(response, outer.start);
  const status = element(response, statusInfo.start);
  if (statusInfo.tag !== 0x30 || status.tag !== 0x02) throw new Error('not a PKIStatusInfo');
  const value = response.subarray(status.start, status.end).reduce((n, byte) => n * 256 + byte, 0);
  if (statusInfo.end >= outer.end) return { status: value, token: null };
  const token = element(response, statusInfo.end);
  return { status: value, token: response.subarray(statusInfo.end, token.end) };
}

export interface TimestampOptions {
  url: string;
  tree: LogTreeStore;
  logger: Logger;
  onTimestamped?: (checkpoint: StoredCheckpoint, token: string) => void;
  minIntervalMs?: number;
  timeoutMs?: number;
}

export class TimestampPublisher implements CheckpointPublisher {
  readonly name = 'timestamp-authority';
  #latest: StoredCheckpoint | null = null;
  #stampedSize = -1;
  #running: Promise<void> | undefined;
  #stopped = false;
  readonly #delay = new InterruptibleDelay();
  readonly #abort = new AbortController();

  constructor(private readonly options: TimestampOptions) {}

  publish(checkpoint: StoredCheckpoint): void {
    if (this.#stopped) return;
    this.#latest = checkpoint;
    this.#start();
  }

  /**
   * Runs the loop unless it runs. A checkpoint published after the loop's last check but before it settled is
   * taken at once: without the second look it would wait for the next checkpoint, which may never come.
   */
  #start(): void {
    this.#running ??= this.#run().finally(() => {
      this.#running = undefined;
      if (!this.#stopped && this.#latest && this.#latest.size > this.#stampedSize) this.#start();
    });
  }

  async #run(): Promise<void> {
    while (!this.#stopped && this.#latest && this.#latest.size > this.#stampedSize) {
      const checkpoint = this.#latest;
      try {
        const token = await this.stamp(checkpoint.note);
        await this.options.tree.setTimestampToken(checkpoint.size, token);
        this.#stampedSize = checkpoint.size;
        this.options.onTimestamped?.(checkpoint, token);
      } catch (error) {
        if (this.#stopped) return;
        this.options.logger.warn({ err: error, url: this.options.url, size: checkpoint.size }, 'log checkpoint: the timestamp authority gave no timestamp; trying again with a later checkpoint');
        this.#stampedSize = checkpoint.size;
      }
      await this.#delay.sleep(this.options.minIntervalMs ?? 1000);
    }
  }

  /** The base64 TimeStampToken over the note. */
  async stamp(note: string): Promise<string> {
    const digest = createHash('sha256').update(note, 'utf8').digest();
    const response = await fetch(this.options.url, {
      method: 'POST',
      body: timestampRequest(digest),
      headers: { 'content-type': 'application/timestamp-query' },
      signal: AbortSignal.any([this.#abort.signal, AbortSignal.timeout(this.options.timeoutMs ?? 10_000)]),
    });
    if (!response.ok) throw new Error(`the timestamp authority answered ${response.status}`);
    const { status, token } = parseTimestampResponse(Buffer.from(await response.arrayBuffer()));
    if ((status !== 0 && status !== 1) || !token) throw new Error(`the timestamp authority did not grant a timestamp (status ${status})`);
    if (!token.includes(digest)) throw new Error('the timestamp token is not over this checkpoint (its message imprint differs)');
    return token.toString('base64');
  }

  async stop(): Promise<void> {
    this.#stopped = true;
    this.#abort.abort();
    this.#delay.interrupt();
    await this.#running?.catch(() => undefined);
  }
}
