#!/usr/bin/env node
/**
 * Verifies an annals audit export (`annals audit export`) without the service: Node.js 18 or later and this
 * one file, nothing else (no npm install, no project code). See docs/audit.md.
 *
 *   node verify-audit-export.mjs BUNDLE.ndjson --public-key audit-keys.json [--json]
 *
 * --public-key names the service's audit key list as the operator gave it to you (`annals audit public-key
 * --json`: every key with its validity and the key chain that vouches for them; a single JWK, or {keyId,
 * jwk}, from an older version is read too, as one key without validity). Without it the keys inside the
 * bundle are used, which proves the bundle is intact but not who made it: the result then says
 * `authenticated: false`.
 *
 * Checks, each reported with the line it concerns:
 * 1. the key list: each key after the first is announced by the key before it (signed by it and by itself),
 *    in order, each valid from its announcement until the next key's: a key added to the list any other way
 *    is refused. The bundle carries the chain up to its signing key; a key announced after your list (by
 *    your list's last key) is accepted, and said so (`keyChain.announcedInBundle`);
 * 2. the signature of the end line (Ed25519, compact JWS, `kid` the key) verifies with that key, made at an
 *    instant (`signedAt`) inside the key's validity, and what it signs (project, selection, range, counts,
 *    SHA-256 of every line before the end line) matches the bundle: any line edited, added, removed or
 *    reordered fails;
 * 3. every event's hash-chain link recomputes: SHA-256 of `prev`, "\n" and the canonical JSON of
 *    [id, type, schemaVersion, data, metadata without chain]; an event without a link (written before chains)
 *    is covered by the service's signed anchor instead, and only seeds the link after it; an event whose
 *    password hash the export left out (`redacted`, version 2: only data.passwordHash of user.created and
 *    user.password-changed may be) cannot be recomputed: its link is the one its metadata carries, under the
 *    signature, and the chain is checked to continue through it;
 * 4. consecutive events of a stream link up, and each stream line's anchors match its first and last event;
 * 5. (version 2) the bundle holds what its header says: every event line of the project, in log order, none
 *    after `log.through`, in the period (occurredAt in [from, to)) or of the entry's stream; every actor line
 *    an event of the kinds that say who someone is (user.created, user.role-changed, user.disabled,
 *    agent-key.issued, agent-key.revoked);
 * 6. (version 2, `log.checkpoint`) the checkpoint the bundle belongs to (a C2SP signed note of the log's Merkle
 *    tree) is signed by one of the keys, under the log's origin (your key list's `origin`), by a key valid when
 *    it was signed; and every event and actor line is in its tree: the line's leaf (RFC 9162: SHA-256 of 0x00 and
 *    the leaf bytes, recomputed from the line; a redacted line gives its leaf's hash) and its `proof` (the
 *    inclusion path) hash up to the checkpoint's root, at leaves in log order.
 *
 * Prints what it found on stderr and one JSON document on stdout ({valid, authenticated, ..., actors: the
 * people and agent keys the bundle's actor lines describe}); exit code 0 when valid, 1 when not, 2 for a
 * usage error or an unreadable file.
 */
import fs from 'node:fs';
import readline from 'node:readline';
import { createHash, createPublicKey, verify } from 'node:crypto';

const ANNOUNCEMENT = 'annals-audit-key-announcement';
const INSTANT = /^\d{4}-\d{2}-\d{2}T\d{2}:\d{2}:\d{2}\.\d{3}Z$/;

const LEGACY_PREV = '0'.repeat(64);
const REDACTABLE = { 'user.created': ['data.passwordHash'], 'user.password-changed': ['data.passwordHash'] };
const REDACTED_VALUE = '[redacted]';
const ACTOR_TYPES = new Set(['user.created', 'user.role-changed', 'user.disabled', 'agent-key.issued', 'agent-key.revoked']);

/** RFC 8785-style canonical JSON of a value parsed from JSON: keys sorted by UTF-16 code units, no whitespace. */
function canonical(value) {
  if (value === null || typeof value !== 'object') return JSON.stringify(value);
  if (Array.isArray(value)) return `[${value.map((item) => canonical(item)).join(',')}]`;
  const keys = Object.keys(value).sort();
  return `{${keys.map((key) => `${JSON.stringify(key)}:${canonical(value[key])}`).join(',')}}`;
}

function sha256hex(text) {
  return createHash('sha256').update(text).digest('hex');
}

function genesisLink(streamId) {
  return sha256hex(`annals-chain/v1 genesis\n${streamId}`);
}

function chainLink(prev, event) {
  const { chain: _link, ...metadata } = event.metadata;
  const schemaVersion = typeof metadata.schemaVersion === 'number' ? metadata.schemaVersion : null;
  return sha256hex(`${prev}\n${canonical([event.id, event.type, schemaVersion, event.data ?? null, metadata])}`);
}

/** RFC 7638 thumbprint of an Ed25519 JWK. */
function thumbprint(jwk) {
  return createHash('sha256').update(canonical({ crv: jwk.crv, kty: jwk.kty, x: jwk.x })).digest('base64url');
}

function ed25519Jwk(jwk) {
  if (jwk?.kty !== 'OKP' || jwk.crv !== 'Ed25519' || typeof jwk.x !== 'string' || !/^[A-Za-z0-9_-]{43}$/.test(jwk.x)) throw new Error('not an Ed25519 public JWK');
  return { kty: 'OKP', crv: 'Ed25519', x: jwk.x };
}

function signatureVerifies(jwk, input, signature) {
  try {
    return verify(null, Buffer.isBuffer(input) ? input : Buffer.from(input, 'ascii'), createPublicKey({ key: jwk, format: 'jwk' }), Buffer.from(signature, 'base64url'));
  } catch {
    return false;
  }
}

/**
 * The key chain: every announcement signed by the key before it (and by the announced key), in order,
 * validity strictly later at each step, no key twice. Answers [{keyId, jwk, validFrom, validUntil, digest}];
 * throws naming the announcement that fails.
 */
function verifyKeyChain(announcements) {
  if (!Array.isArray(announcements) || announcements.length === 0) throw new Error('the key chain is empty');
  const keys = [];
  announcements.forEach((announcement, index) => {
    const fail = (message) => {
      throw new Error(`key announcement ${index + 1}: ${message}`);
    };
    if (typeof announcement?.payload !== 'string' || !Array.isArray(announcement.signatures)) fail('not a JWS in the General JSON Serialization');
    const bytes = Buffer.from(announcement.payload, 'base64url');
    let statement;
    try {
      statement = JSON.parse(bytes.toString('utf8'));
    } catch {
      fail('its payload is not JSON');
    }
    if (statement?.kind !== ANNOUNCEMENT || statement.version !== 1) fail(`not an ${ANNOUNCEMENT}`);
    if (statement.sequence !== index) fail('announcements were removed, added or reordered');
    let jwk;
    try {
      jwk = ed25519Jwk(statement.publicKey);
    } catch (error) {
      fail(error.message);
    }
    if (statement.keyId !== thumbprint(jwk)) fail('its key id is not the thumbprint of its key');
    if (typeof statement.validFrom !== 'string' || !INSTANT.test(statement.validFrom)) fail('validFrom is not an instant');
    const prior = keys[index - 1];
    if (!prior && statement.previous !== null) fail('the first key names a previous key');
    if (prior) {
      if (statement.previous?.keyId !== prior.keyId || statement.previous?.announcement !== prior.digest) fail(`it does not continue from the announcement of key ${prior.keyId}`);
      if (Date.parse(statement.validFrom) <= Date.parse(prior.validFrom)) fail('its validity does not start after that of the key before it');
      if (keys.some((k) => k.keyId === statement.keyId)) fail(`key ${statement.keyId} was announced before`);
    }
    const required = prior ? [prior, { keyId: statement.keyId, jwk }] : [{ keyId: statement.keyId, jwk }];
    for (const signer of required) {
      const ok = announcement.signatures.some((s) => {
        let header;
        try {
          header = JSON.parse(Buffer.from(String(s?.protected), 'base64url').toString('utf8'));
        } catch {
          return false;
        }
        return header?.alg === 'EdDSA' && header.kid === signer.keyId && signatureVerifies(signer.jwk, `${s.protected}.${announcement.payload}`, String(s.signature));
      });
      if (!ok) fail(`no valid signature by ${signer === prior ? 'the key before it' : 'the key itself'} (${signer.keyId}): a key joins the list only by the previous key's announcement`);
    }
    if (prior) prior.validUntil = statement.validFrom;
    keys.push({ keyId: statement.keyId, jwk, validFrom: statement.validFrom, validUntil: null, digest: `sha256:${createHash('sha256').update(bytes).digest('hex')}` });
  });
  return keys;
}

/** Whether chain `a` is the beginning of chain `b`. */
function isPrefix(a, b) {
  return a.length <= b.length && a.every((key, i) => key.digest === b[i].digest);
}

/** SHA-256 of the parts, concatenated. */
function sha256(...parts) {
  const h = createHash('sha256');
  for (const part of parts) h.update(part);
  return h.digest();
}

/**
 * The leaf bytes the log's Merkle tree hashes for an event (annals' src/audit/log-leaf.ts): its stream,
 * revision, id, type, canonical metadata and data as JSON, one per line after the format's name.
 */
function leafText(line) {
  return ['annals-log-leaf/v1', JSON.stringify(line.streamId), String(line.revision), JSON.stringify(line.id), JSON.stringify(line.type), canonical(line.metadata), JSON.stringify(line.data ?? null)].join('\n');
}

/** RFC 9162 2.1.3.2: whether `path` leads from the leaf hash at `index` to `root` in a tree of `size` leaves. */
function inclusionVerifies(leafHash, index, size, path, root) {
  if (!(Number.isSafeInteger(index) && index >= 0 && index < size)) return false;
  let fn = index;
  let sn = size - 1;
  let r = leafHash;
  for (const p of path) {
    if (sn === 0) return false;
    if (fn % 2 === 1 || fn === sn) {
      r = sha256(Buffer.of(1), p, r);
      while (fn % 2 === 0 && fn !== 0) {
        fn /= 2;
        sn = Math.floor(sn / 2);
      }
    } else {
      r = sha256(Buffer.of(1), r, p);
    }
    fn = Math.floor(fn / 2);
    sn = Math.floor(sn / 2);
  }
  return sn === 0 && r.equals(root);
}

/**
 * A C2SP signed note holding a tlog-checkpoint: its body (what is signed, with its final newline), origin,
 * size, root hash, and signature lines ({name, keyHash, signature}). Throws when it is not one.
 */
function parseCheckpointNote(note) {
  if (typeof note !== 'string') throw new Error('no signed note');
  const split = note.lastIndexOf('\n\n');
  if (split < 0) throw new Error('not a signed note (no empty line before its signatures)');
  const body = note.slice(0, split + 1);
  const [origin, sizeLine, rootLine] = body.split('\n');
  if (!/^\d+$/.test(sizeLine ?? '')) throw new Error(`its size line ${JSON.stringify(sizeLine)} is not a number`);
  const rootHash = Buffer.from(rootLine ?? '', 'base64');
  if (rootHash.length !== 32 || rootHash.toString('base64') !== rootLine) throw new Error('its root hash line is not 32 bytes of base64');
  const signatures = note
    .slice(split + 2)
    .split('\n')
    .filter((l) => l !== '')
    .map((l) => {
      const match = /^\u2014 (\S+) ([A-Za-z0-9+/=]+)$/.exec(l);
      const bytes = match ? Buffer.from(match[2], 'base64') : Buffer.alloc(0);
      if (!match || bytes.length < 5) throw new Error(`a signature line is malformed: ${JSON.stringify(l)}`);
      return { name: match[1], keyHash: bytes.readUInt32BE(0), signature: bytes.subarray(4) };
    });
  return { body, origin, size: Number(sizeLine), rootHash, signatures };
}

/** The signed-note key hash of an Ed25519 key under `name`: the first 4 bytes of SHA-256(name, "\n", 0x01, key). */
function noteKeyHash(name, jwk) {
  return sha256(Buffer.from(`${name}\n`), Buffer.of(1), Buffer.from(jwk.x, 'base64url')).readUInt32BE(0);
}

function usage(message) {
  process.stderr.write(`${message}\nusage: node verify-audit-export.mjs BUNDLE.ndjson [--public-key KEY.json] [--json]\n`);
  process.exit(2);
}

const args = process.argv.slice(2);
let file;
let keyFile;
for (let i = 0; i < args.length; i++) {
  if (args[i] === '--public-key') keyFile = args[++i] ?? usage('--public-key needs a file');
  else if (args[i] === '--json') continue;
  else if (args[i].startsWith('-')) usage(`unknown option ${args[i]}`);
  else if (file === undefined) file = args[i];
  else usage(`one bundle at a time (${args[i]})`);
}
if (!file) usage('the bundle to verify is missing');
if (!fs.existsSync(file)) usage(`no file ${file}`);

const problems = [];
const problem = (line, message) => problems.push({ line, message });
let listOrigin = null;

// The keys you were given: a key list with its chain (`annals audit public-key --json`), or one JWK.
let trusted;
if (keyFile !== undefined) {
  let parsed;
  try {
    parsed = JSON.parse(fs.readFileSync(keyFile, 'utf8'));
  } catch (error) {
    usage(`${keyFile}: not JSON (${error.message})`);
  }
  if (typeof parsed?.origin === 'string') listOrigin = parsed.origin;
  if (Array.isArray(parsed?.keyChain)) {
    try {
      trusted = { chain: verifyKeyChain(parsed.keyChain) };
    } catch (error) {
      trusted = { chain: [] };
      problem(null, `your key list ${keyFile} does not verify: ${error.message}`);
    }
  } else {
    try {
      const jwk = ed25519Jwk(parsed?.jwk ?? parsed);
      trusted = { single: { keyId: thumbprint(jwk), jwk, validFrom: null, validUntil: null } };
    } catch (error) {
      usage(`${keyFile}: neither a key list nor an Ed25519 JWK (${error.message})`);
    }
  }
}

const hash = createHash('sha256');
const streams = new Map();
const anchorLines = new Map();
const actorLines = [];
let header;
let end;
let events = 0;
let actorEvents = 0;
let unlinked = 0;
let redactedEvents = 0;
let lastPosition = null;
let checkpoint = null;
let proved = 0;
let leafHashesGiven = 0;
const lastLeaf = { event: -1, actor: -1 };

/** The checkpoint of a version 2 header (`log.checkpoint`), parsed; its signature is checked once the keys are known. */
function readCheckpoint(line) {
  const given = line?.log?.checkpoint;
  if (line?.version !== 2 || given == null) return null;
  try {
    const note = parseCheckpointNote(given.note);
    if (given.size !== note.size || given.rootHash !== note.rootHash.toString('base64')) problem(1, 'log.checkpoint: its size or root hash is not the signed note\'s');
    return { ...note, note: given.note, signedAt: given.signedAt };
  } catch (error) {
    problem(1, `log.checkpoint: ${error.message}`);
    return null;
  }
}

/** The line's event is a leaf of the checkpoint's tree (check 6); null when it is, else the problem. */
function inclusionProblem(line) {
  if (!checkpoint) return null;
  const proof = line.proof;
  if (proof === undefined || proof === null || typeof proof !== 'object') return 'carries no inclusion proof in the checkpoint\'s tree';
  if (!Number.isSafeInteger(proof.leafIndex) || proof.leafIndex < 0 || proof.leafIndex >= checkpoint.size) return `its leaf ${proof.leafIndex} is not in the checkpoint's tree of ${checkpoint.size} leaves`;
  if (proof.leafIndex <= lastLeaf[line.kind]) return `its leaf ${proof.leafIndex} is not after the leaf of the ${line.kind} line before it (${lastLeaf[line.kind]}): not in log order`;
  lastLeaf[line.kind] = proof.leafIndex;
  if (!Array.isArray(proof.hashes) || proof.hashes.some((h) => typeof h !== 'string' || Buffer.from(h, 'base64').length !== 32)) return 'its inclusion path is not a list of base64 SHA-256 hashes';
  let leafHash;
  if (line.redacted !== undefined) {
    // Its content was left out in part, so its leaf cannot be recomputed: the proof gives the leaf's hash.
    leafHash = Buffer.from(String(proof.leafHash ?? ''), 'base64');
    if (leafHash.length !== 32) return 'is redacted and its proof gives no leaf hash';
    leafHashesGiven += 1;
  } else {
    leafHash = sha256(Buffer.of(0), Buffer.from(leafText(line), 'utf8'));
  }
  if (!inclusionVerifies(leafHash, proof.leafIndex, checkpoint.size, proof.hashes.map((h) => Buffer.from(h, 'base64')), checkpoint.rootHash)) {
    return `its inclusion proof does not lead to the checkpoint's root: the event ${line.redacted === undefined ? `is not the one the log holds at leaf ${proof.leafIndex}` : `at leaf ${proof.leafIndex} is not in the tree`}`;
  }
  proved += 1;
  return null;
}
let lineNumber = 0;
let afterEnd = false;

/** The redaction a line declares, checked: only a password hash, only as the export writes it. */
function redactionProblem(line) {
  if (line.redacted === undefined) return null;
  const allowed = REDACTABLE[line.type] ?? [];
  if (header?.version !== 2 || !Array.isArray(line.redacted) || line.redacted.length === 0) return 'declares redacted fields, which this bundle cannot have';
  for (const field of line.redacted) {
    if (!allowed.includes(field)) return `redacts ${JSON.stringify(field)}, which no export leaves out of a ${line.type}`;
    if (line.data?.[field.slice('data.'.length)] !== REDACTED_VALUE) return `says it redacted ${field} but holds a value there`;
  }
  if (typeof line.metadata?.chain !== 'string' && !checkpoint) return 'is redacted and carries no link of its own';
  return null;
}

/** Version 2: the event line is one the header's selection holds. */
function selectionProblem(line) {
  if (header?.version !== 2) return null;
  if (line.metadata?.projectId !== header.projectId) return `an event of project ${line.metadata?.projectId}, not ${header.projectId}`;
  if (typeof line.position !== 'string' || (header.log?.through != null && line.position > header.log.through)) return `position ${line.position} is after the log position the export read to (${header.log?.through})`;
  if (lastPosition !== null && line.position <= lastPosition) return `position ${line.position} is not after the event line before it (${lastPosition}): not in log order`;
  const selection = header.selection;
  if (selection?.kind === 'period') {
    const at = Date.parse(line.metadata?.occurredAt);
    if (!(at >= Date.parse(selection.from) && at < Date.parse(selection.to))) return `occurredAt ${line.metadata?.occurredAt} is outside [${selection.from}, ${selection.to})`;
  } else if (selection?.kind === 'entry') {
    if (line.streamId !== selection.streamId) return `stream ${line.streamId} is not the entry's (${selection.streamId})`;
  } else {
    return 'the header names no selection';
  }
  return null;
}

const input = readline.createInterface({ input: fs.createReadStream(file, { encoding: 'utf8' }), crlfDelay: Infinity });
for await (const text of input) {
  lineNumber += 1;
  if (afterEnd) {
    if (text.trim() !== '') problem(lineNumber, 'a line after the end line');
    continue;
  }
  let line;
  try {
    line = JSON.parse(text);
  } catch (error) {
    problem(lineNumber, `not JSON (${error.message})`);
    hash.update(`${text}\n`);
    continue;
  }
  if (line?.kind === 'end') {
    end = { ...line, lineNumber };
    afterEnd = true;
    continue;
  }
  hash.update(`${text}\n`);
  if (lineNumber === 1) {
    if (line?.kind !== 'header' || line.format !== 'annals-audit-export' || (line.version !== 1 && line.version !== 2)) {
      problem(1, 'not an annals audit export (version 1 or 2) header');
    }
    header = line;
    checkpoint = readCheckpoint(line);
    continue;
  }
  if (line?.kind === 'event' || (line?.kind === 'actor' && header?.version === 2)) {
    if (line.kind === 'event') {
      events += 1;
      const outside = selectionProblem(line);
      if (outside) problem(lineNumber, `event ${line.id}: ${outside}`);
      lastPosition = line.position;
      // An event that says who someone is (a role change made in the project) counts for the actors too: it is
      // in the bundle once, as an event, not again as an actor line.
      if (ACTOR_TYPES.has(line.type)) actorLines.push(line);
    } else {
      actorEvents += 1;
      if (!ACTOR_TYPES.has(line.type)) problem(lineNumber, `actor line ${line.id} is a ${line.type}, not an event that says who someone is`);
      actorLines.push(line);
    }
    const notIncluded = inclusionProblem(line);
    if (notIncluded) problem(lineNumber, `${line.kind} ${line.id}: ${notIncluded}`);
    const stream = streams.get(line.streamId);
    const revision = BigInt(line.revision);
    if (stream && stream.revision === revision - 1n && stream.link !== undefined && line.prev !== stream.link) {
      problem(lineNumber, `stream ${line.streamId} revision ${line.revision}: prev is not the link of revision ${stream.revision} before it`);
    }
    if (!stream && revision === 0n && line.prev !== genesisLink(line.streamId)) {
      problem(lineNumber, `stream ${line.streamId} revision 0: prev is not the stream's genesis`);
    }
    let link;
    const redaction = redactionProblem(line);
    if (redaction) {
      problem(lineNumber, `event ${line.id}: ${redaction}`);
      link = line.metadata?.chain;
    } else if (line.redacted !== undefined) {
      // Its link is the one it carries (covered by the signature), or, for an event written since the tree
      // superseded links, unknown: the stream's anchors are not checked past it; the tree covers it (check 6).
      redactedEvents += 1;
      link = line.metadata.chain;
    } else if (typeof line.metadata?.chain === 'string') {
      link = chainLink(line.prev, line);
      if (link !== line.metadata.chain) {
        problem(lineNumber, `stream ${line.streamId} revision ${line.revision} (event ${line.id}): the link does not recompute: the event or its prev was changed`);
      }
    } else {
      unlinked += 1;
      link = chainLink(LEGACY_PREV, line);
    }
    streams.set(line.streamId, { revision, link, first: stream?.first ?? { revision, prev: line.prev } });
    continue;
  }
  if (line?.kind === 'stream') {
    anchorLines.set(line.streamId, { ...line, lineNumber });
    continue;
  }
  problem(lineNumber, `unexpected line kind ${JSON.stringify(line?.kind)}`);
}

for (const [streamId, stream] of streams) {
  const anchors = anchorLines.get(streamId);
  if (!anchors) {
    problem(null, `stream ${streamId} has events but no stream line`);
    continue;
  }
  if (anchors.prev !== stream.first.prev || (stream.link !== undefined && anchors.last !== stream.link) || anchors.firstRevision !== stream.first.revision.toString() || anchors.lastRevision !== stream.revision.toString()) {
    problem(anchors.lineNumber, `stream ${streamId}: its anchors do not match its first and last events`);
  }
}
for (const [streamId, anchors] of anchorLines) if (!streams.has(streamId)) problem(anchors.lineNumber, `stream line for ${streamId}, which has no events`);

const digest = `sha256:${hash.digest('hex')}`;
let authenticated = false;
let signer = null;
let signedAt = null;
let keyChainReport = null;
let checkpointReport = null;
if (!header) problem(1, 'no header');
if (!end) {
  problem(null, 'no end line: the bundle is cut short');
} else {
  if (end.events !== events || end.streams !== streams.size) problem(end.lineNumber, `the end line counts ${end.events} events in ${end.streams} streams; the bundle holds ${events} in ${streams.size}`);
  if (header?.version === 2 && end.actorEvents !== actorEvents) problem(end.lineNumber, `the end line counts ${end.actorEvents} actor events; the bundle holds ${actorEvents}`);
  if (end.digest !== digest) problem(end.lineNumber, `the lines before the end line hash to ${digest}, not ${end.digest}: a line was edited, added or removed`);
  let keys = [];
  let announcedInBundle = 0;
  let bundleChain;
  if (header?.keyChain !== undefined) {
    try {
      bundleChain = verifyKeyChain(header.keyChain);
    } catch (error) {
      problem(1, `the bundle's key chain does not verify: ${error.message}`);
    }
  }
  if (trusted?.chain) {
    keys = trusted.chain;
    if (bundleChain && trusted.chain.length > 0) {
      if (isPrefix(trusted.chain, bundleChain)) {
        // Keys announced after your list, each by the key before it: vouched for by your list's last key.
        keys = bundleChain;
        announcedInBundle = bundleChain.length - trusted.chain.length;
      } else if (!isPrefix(bundleChain, trusted.chain)) {
        problem(1, 'the bundle\'s key chain is not a continuation of your key list: the key chain was forked');
      }
    }
  } else if (trusted?.single) {
    keys = [trusted.single];
  } else if (bundleChain) {
    keys = bundleChain;
  } else if (header?.publicKey) {
    try {
      const jwk = ed25519Jwk(header.publicKey);
      keys = [{ keyId: thumbprint(jwk), jwk, validFrom: null, validUntil: null }];
    } catch (error) {
      problem(1, `the header's public key: ${error.message}`);
    }
  }
  try {
    const [protectedPart, payloadPart, signaturePart] = String(end.signature).split('.');
    const protectedHeader = JSON.parse(Buffer.from(protectedPart, 'base64url').toString('utf8'));
    if (protectedHeader.alg !== 'EdDSA') throw new Error(`algorithm ${protectedHeader.alg}, not EdDSA`);
    const candidates = protectedHeader.kid === undefined ? keys : keys.filter((k) => k.keyId === protectedHeader.kid);
    if (candidates.length === 0) {
      throw new Error(`signed by key ${protectedHeader.kid}, which ${trusted ? 'your key list does not hold, and no announcement by a key of it vouches for' : 'the bundle does not hold'}`);
    }
    const key = candidates.find((k) => signatureVerifies(k.jwk, `${protectedPart}.${payloadPart}`, signaturePart));
    if (!key) throw new Error(`the signature does not verify with key ${candidates.map((k) => k.keyId).join(', ')}`);
    signer = key;
    const signed = JSON.parse(Buffer.from(payloadPart, 'base64url').toString('utf8'));
    const expected = { format: header?.format, version: header?.version, projectId: header?.projectId, from: header?.from, to: header?.to, exportedAt: header?.exportedAt, events: end.events, streams: end.streams, digest: end.digest, keyId: header?.keyId };
    if (header?.version === 2) Object.assign(expected, { selection: header.selection, through: header.log?.through ?? null, actorEvents: end.actorEvents });
    for (const [field, value] of Object.entries(expected)) {
      if (canonical(signed[field] ?? null) !== canonical(value ?? null)) problem(end.lineNumber, `the signature covers ${field} ${JSON.stringify(signed[field])}, the bundle says ${JSON.stringify(value)}`);
    }
    if (signed.digest !== digest) problem(end.lineNumber, 'the signed digest is not the digest of the bundle\'s lines');
    if (header?.keyId !== key.keyId) problem(1, `the header names key ${header?.keyId}, the bundle is signed by key ${key.keyId}`);
    // When it was signed (exports before key rotation carry only exportedAt), inside the key's validity.
    signedAt = typeof signed.signedAt === 'string' ? signed.signedAt : signed.exportedAt;
    if (key.validFrom !== null) {
      const at = Date.parse(signedAt);
      if (Number.isNaN(at) || at < Date.parse(key.validFrom) || (key.validUntil !== null && at >= Date.parse(key.validUntil))) {
        problem(end.lineNumber, `signed at ${signedAt} by key ${key.keyId}, which signs from ${key.validFrom}${key.validUntil ? ` until ${key.validUntil}` : ''}: outside its validity`);
      }
      if (typeof signed.signedAt === 'string' && Date.parse(signed.signedAt) < Date.parse(signed.exportedAt)) problem(end.lineNumber, 'signed before the export began');
    }
    keyChainReport = { keys: keys.length, announcedInBundle, validFrom: key.validFrom, validUntil: key.validUntil };
    authenticated = trusted !== undefined;
  } catch (error) {
    problem(end.lineNumber, `signature: ${error.message}`);
  }
  if (checkpoint) checkpointReport = checkCheckpointSignature(checkpoint, keys);
}

/**
 * The checkpoint's signed note: a signature line under the log's origin by one of the keys (its key hash names
 * it), verifying over the note's body, made while that key was valid (at the checkpoint's signedAt, which the
 * bundle's signature covers).
 */
function checkCheckpointSignature(c, keys) {
  if (listOrigin !== null && c.origin !== listOrigin) {
    problem(1, `log.checkpoint: it is a checkpoint of the log ${JSON.stringify(c.origin)}, your key list's log is ${JSON.stringify(listOrigin)}`);
    return null;
  }
  const signedBy = keys.find((key) => c.signatures.some((s) => s.name === c.origin && s.keyHash === noteKeyHash(c.origin, key.jwk) && signatureVerifies(key.jwk, Buffer.from(c.body, 'utf8'), s.signature.toString('base64url'))));
  if (!signedBy) {
    problem(1, `log.checkpoint: its signed note verifies with no ${trusted ? 'key of your key list' : 'key of the bundle'} under the origin ${c.origin}`);
    return null;
  }
  if (signedBy.validFrom !== null) {
    const at = Date.parse(c.signedAt);
    if (Number.isNaN(at) || at < Date.parse(signedBy.validFrom) || (signedBy.validUntil !== null && at >= Date.parse(signedBy.validUntil))) {
      problem(1, `log.checkpoint: signed at ${c.signedAt} by key ${signedBy.keyId}, which signs from ${signedBy.validFrom}${signedBy.validUntil ? ` until ${signedBy.validUntil}` : ''}: outside its validity`);
    }
  }
  return { origin: c.origin, size: c.size, rootHash: c.rootHash.toString('base64'), signedAt: c.signedAt, keyId: signedBy.keyId };
}

/**
 * Who the actor lines (and the events of the same kinds), in log order, say each actor was: every user with their e-mail and roles over time (from when each
 * held), disabled or not; every agent key with its name, scope, who issued it and when, and its revocation.
 */
function actorsOf(lines) {
  const users = new Map();
  const agentKeys = new Map();
  for (const line of lines) {
    const d = line.data ?? {};
    const at = line.metadata?.occurredAt ?? null;
    const user = (id) => {
      if (!users.has(id)) users.set(id, { userId: id, email: null, roles: [], disabledAt: null });
      return users.get(id);
    };
    if (line.type === 'user.created') Object.assign(user(d.userId), { email: d.email ?? null, createdAt: at, createdBy: line.metadata?.actor ?? null }).roles.push({ role: d.role, from: at });
    else if (line.type === 'user.role-changed') user(d.userId).roles.push({ role: d.role, from: at, by: line.metadata?.actor ?? null });
    else if (line.type === 'user.disabled') user(d.userId).disabledAt = at;
    else if (line.type === 'agent-key.issued') agentKeys.set(d.keyId, { keyId: d.keyId, name: d.name, scope: d.scope, issuedAt: d.issuedAt ?? at, issuedBy: line.metadata?.actor ?? null, revokedAt: null });
    else if (line.type === 'agent-key.revoked' && agentKeys.has(d.keyId)) agentKeys.get(d.keyId).revokedAt = d.revokedAt ?? at;
  }
  return { users: [...users.values()], agentKeys: [...agentKeys.values()] };
}

const valid = problems.length === 0;
const result = {
  valid,
  authenticated: valid && authenticated,
  file,
  version: header?.version ?? null,
  projectId: header?.projectId ?? null,
  selection: header?.selection ?? (header ? { kind: 'period', from: header.from, to: header.to } : null),
  from: header?.from ?? null,
  to: header?.to ?? null,
  through: header?.log?.through ?? null,
  exportedAt: header?.exportedAt ?? null,
  keyId: signer?.keyId ?? null,
  signedAt,
  keyChain: keyChainReport,
  checkpoint: checkpointReport,
  inclusion: { proved, leafHashesGiven },
  events,
  actorEvents,
  unlinkedEvents: unlinked,
  redactedEvents,
  streams: streams.size,
  digest,
  actors: actorsOf([...actorLines].sort((a, b) => (BigInt(a.position) < BigInt(b.position) ? -1 : BigInt(a.position) > BigInt(b.position) ? 1 : 0))),
  problems,
};
if (valid) {
  const announced = keyChainReport?.announcedInBundle ? ` (announced in the bundle by the last key of your list: ask the operator for the new key list)` : '';
  const inTree = checkpointReport ? `, every one in the log's tree of checkpoint ${checkpointReport.size} (signed by key ${checkpointReport.keyId})` : ', with no checkpoint of the log (an export made before the log had its tree)';
  process.stderr.write(`valid: ${events} events${actorEvents ? ` and ${actorEvents} events of their actors` : ''} in ${streams.size} streams${inTree}, signature by key ${signer?.keyId} at ${signedAt}${announced}${authenticated ? '' : ' (the key inside the bundle: pass --public-key to establish who signed it)'}\n`);
} else {
  process.stderr.write(`NOT valid: ${problems.length} problem(s)\n${problems.slice(0, 20).map((p) => `  ${p.line === null ? '' : `line ${p.line}: `}${p.message}`).join('\n')}\n`);
}
process.stdout.write(`${JSON.stringify(result)}\n`);
process.exit(valid ? 0 : 1);
