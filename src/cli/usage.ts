/**
 * Each command group's usage, apart from the groups' modules: `annals`, `annals --help` and an unknown command
 * print them all without loading every group (~1.9 s of CPU before, the groups' dependencies included).
 */
import { PLANS } from '../domain/plans.ts';

/** The environment variable a password may come from instead of the command line (kept out of `ps`; cli-support's passwordFrom). */
export const PASSWORD_ENV = 'ANNALS_ADMIN_PASSWORD';

export const COMMAND_USAGE = {
  projections: `  annals projections status [--json]
  annals projections rebuild [name] [--json]
  annals projections retry <name>
  annals projections skip <name> --reason TEXT [--json]`,
  bootstrap: `  annals bootstrap --project <name> --plan <${PLANS.join('|')}> --admin-email <email> --admin-password <password>
                          [--project-slug <slug>] [--locales en,ja] [--tenant-name <name>]
      (the password may come from ${PASSWORD_ENV} instead of --admin-password; the first locale is the default)`,
  users: `  annals users create --tenant <tenantId> --email <email> --password <password> --role <tenant_admin|tenant_user|editor|reviewer>
      (the password may come from ${PASSWORD_ENV} instead of --password; editor and reviewer are tenant_user)
  annals users set-role --user <userId> --role <tenant_admin|tenant_user> [--role-id <customRoleId>] [--json]
      (gives a member a role, or one of the tenant's custom roles with --role-id; for when no tenant admin is left)
  annals users roles --tenant <tenantId> [--json]   the tenant's custom roles, their capabilities and form-set limits`,
  keys: `  annals keys create --project <projectId> --type agent|public [--scope full|content|schema] [--name <name>]
  annals keys revoke --project <projectId> --key-id <keyId>
      (an agent key's scope defaults to full; the key is printed once and stored only as a hash)`,
  'sign-in': `  annals sign-in show --tenant <tenantId> [--json]             the tenant's single sign-on, OpenID Connect or SAML (never a secret)
  annals sign-in allow-passwords --tenant <tenantId> [--json]  keep single sign-on, let passwords in again
  annals sign-in remove --tenant <tenantId> [--json]           remove single sign-on
      (for when nobody can sign in: the provider down, its secret expired, with single sign-on only on)
  annals sign-in reset-second-factor --user <userId> [--json]  remove a user's second factor (app, passkeys, recovery codes)
  annals sign-in second-factor --tenant <tenantId> --required true|false [--json]
                                                               require a second factor for password sign-in, or stop
      (for the last tenant admin who lost their authenticator app and recovery codes)`,
  projects: `  annals projects set-plan --project <projectId> --plan <${PLANS.join('|')}>`,
  demo: `  annals demo [--base-url <url>] [--json]    a demo project (Business plan, en + ja): blog with images, news, a contact form
      (--base-url: where the service is reached, for the URLs printed; default http://localhost:<PORT>)`,
  log: `  annals log export --to FILE.ndjson [--json]   the whole event log, in order, into a file
  annals log import FILE.ndjson [--keys-from KEYS.sqlite] [--media-from LOCATION] [--json]
                                                        append a file's log into an empty event store (rerun to resume), then verify;
                                                        --keys-from also copies its submissions' keys into this key store;
                                                        --media-from also copies its assets' bytes into this blob store (as media copy)
  annals log verify FILE.ndjson                 compare a file's log with the event store's (event and stream counts, digest)
  annals log compact [--vacuum] [--batch N] [--json]
                                                        rewrite the embedded log's events stored as text (older builds) compressed, in place,
                                                        N events a transaction (1000); --vacuum then gives the freed space back (the service stopped)`,
  media: `  annals media copy --from LOCATION [--to LOCATION] [--log FILE.ndjson] [--concurrency N] [--json]
                                                copy every live asset's bytes between blob stores, each checked against the
                                                SHA-256 the log recorded on both sides; rerun to resume (what is there is kept)
                                                LOCATION: a folder (as DATA_DIR/media), or s3://BUCKET[?endpoint=URL&region=R&path-style=true]
                                                with credentials from S3_ACCESS_KEY_ID and S3_SECRET_ACCESS_KEY; --to defaults to the
                                                configured store (S3_BUCKET, else DATA_DIR/media), the assets come from --log or the configured log
  annals media verify [--project ID] [--quick] [--concurrency N] [--json]
                                                check that the configured blob store holds every asset the read models know, with
                                                the recorded size and SHA-256 (--quick: sizes only); exit 1 on a missing or corrupt blob`,
  backup: `  annals backup <dir> [--json]     a consistent copy of every store in DATA_DIR, taken while the service runs
      (<dir>: a new or empty folder outside DATA_DIR; EventStoreDB and MongoDB have their own backups)`,
  restore: `  annals restore <dir> [--json]    restores a backup into an empty DATA_DIR (start the service afterwards)`,
  audit: `  annals audit verify [--project ID] [--against FILE|witness:NAME] [--json]
                                                 recompute every hash chain, anchor and leaf of the log's Merkle tree; with --against (or
                                                 AUDIT_CHECKPOINT_DIR) prove the log extends that checkpoint; exit 1 on a break
  annals audit checkpoint [--json]              bring the log tree up to the log and sign a checkpoint of it now
  annals audit proof inclusion --event ID [--size N] [--json]    that an event is in the tree of the checkpoint of size N (default: the latest)
  annals audit proof consistency --from N [--to M] [--json]      that the tree of size N is a prefix of that of size M (default: the latest)
  annals audit log-key [--json]                 the log's origin and the vkey of each audit key (what witnesses and verifiers are given)
  annals audit diff A.ndjson B.ndjson [--public-key KEYS.json] [--consistency PROOF.json] [--json]
                                                 prove export B extends export A: B's checkpoint extends A's (a consistency proof,
                                                 from the log tree or PROOF.json), and B holds A's events unchanged or continues them
  annals audit export --project ID --from T --to T --out FILE.ndjson [--json]
  annals audit export --project ID --entry ENTRY_ID --out FILE.ndjson [--json]
                                                 a signed bundle of a project's events of [from, to), or of one entry's whole history,
                                                 with the actors they name (verify it with scripts/audit/verify-audit-export.mjs)
  annals audit public-key [--json]              every audit key with its validity (JWK, PEM, signed-note vkey) and the key chain: give it to auditors
  annals audit rotate-key [--previous-key-file FILE] [--json]
                                                 announce the configured key (AUDIT_KEY_FILE or the PKCS#11 key) as the successor of the current one
  annals audit anchor [--json]                  sign an anchor over events without a chain link written since the last anchor`,
} as const;
