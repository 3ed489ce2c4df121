import { Counter, Gauge, Histogram, type Registry } from 'prom-client';

/**
 * The log tree's metrics, on the service's registry: how far the tree and its checkpoints are, how long a
 * checkpoint takes to cover an append, how witnesses answer (alert on `annals_audit_witness_requests_total`
 * with outcome fork, rolled-back or unknown-log, and on unavailable rising), and whether writes are refused.
 */
export class AuditMetrics {
  readonly #treeSize: Gauge;
  readonly #checkpointSize: Gauge;
  readonly #checkpoints: Counter;
  readonly #lag: Histogram;
  readonly #witness: Counter<'witness' | 'outcome'>;
  readonly #witnessCosigned: Gauge<'witness'>;
  readonly #writesRefused: Gauge;

  constructor(registry: Registry) {
    const registers = [registry];
    this.#treeSize = new Gauge({ name: 'annals_audit_tree_size', help: 'Events (leaves) in the log\'s Merkle tree.', registers });
    this.#checkpointSize = new Gauge({ name: 'annals_audit_checkpoint_size', help: 'Tree size of the latest signed checkpoint.', registers });
    this.#checkpoints = new Counter({ name: 'annals_audit_checkpoints_total', help: 'Checkpoints signed.', registers });
    this.#lag = new Histogram({
      name: 'annals_audit_checkpoint_lag_seconds',
      help: 'From the tree growing (an event folded into it) to a signed checkpoint covering it.',
      buckets: [0.05, 0.1, 0.25, 0.5, 1, 1.5, 2, 5, 10],
      registers,
    });
    this.#witness = new Counter({
      name: 'annals_audit_witness_requests_total',
      help: 'add-checkpoint requests to witnesses, by witness and outcome: cosigned, conflict (sent again from the witness\'s size), rolled-back (the witness holds more than the log), fork (422), unknown-log (403/404), unavailable (anything else, retried with backoff).',
      labelNames: ['witness', 'outcome'],
      registers,
    });
    this.#witnessCosigned = new Gauge({ name: 'annals_audit_witness_cosigned_size', help: 'Tree size a witness last cosigned.', labelNames: ['witness'], registers });
    this.#writesRefused = new Gauge({ name: 'annals_audit_writes_refused', help: '1 while writes are refused because the log does not extend its last published checkpoint.', registers });
  }

  treeGrew(size: number): void {
    this.#treeSize.set(size);
  }

  checkpointed(size: number, lagSeconds: number | null): void {
    this.#checkpoints.inc();
    this.#checkpointSize.set(size);
    if (lagSeconds !== null) this.#lag.observe(lagSeconds);
  }

  witnessAnswered(witness: string, outcome: string, cosignedSize?: number): void {
    this.#witness.inc({ witness, outcome });
    if (cosignedSize !== undefined) this.#witnessCosigned.set({ witness }, cosignedSize);
  }

  writesRefused(refused: boolean): void {
    this.#writesRefused.set(refused ? 1 : 0);
  }
}
