/**
 * A KurrentDB / EventStoreDB stand-in that speaks the server's gRPC protocol: the v1 service definitions that
 * @kurrent/kurrentdb-client ships, served with @grpc/grpc-js on 127.0.0.1, insecure (`?tls=false`). The real
 * client talks to it as to a server: its batch append (or plain Append), its native read bridge (a Rust gRPC
 * client, for stream and $all reads), its subscriptions and its own error conversion all run.
 *
 * It is a peer for tests, not a product: one node, an in-memory log (./log.ts), the Streams service
 * (./streams-service.ts, ./subscription.ts), ServerFeatures and Gossip (./node-services.ts), and faults a test
 * asks for (./faults.ts). Where it differs from KurrentDB, the module that does the job says so; a pass here
 * shows the adapter right against the protocol and these semantics, and only a real server (the suites run
 * against one when EVENTSTORE_CONNECTION_STRING is set or a container runtime answers) shows compatibility.
 */
import { randomUUID } from 'node:crypto';
import * as grpc from '@grpc/grpc-js';
import streamsGrpc from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/streams_grpc_pb.js';
import serverFeaturesGrpc from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_grpc_pb.js';
import gossipGrpc from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/gossip_grpc_pb.js';
import { Faults } from './faults.ts';
import { CallLedger } from './ledger.ts';
import { EsdbLog } from './log.ts';
import { gossipService, serverFeaturesService } from './node-services.ts';
import { streamsService } from './streams-service.ts';
import type { CaughtUpReport } from './subscription.ts';

export interface StandInOptions {
  /**
   * The version ServerFeatures reports (default '24.10.0'). null: a server before 21.10, without
   * ServerFeatures and BatchAppend, so that clients append with the plain Append call.
   */
  version: string | null;
  /** How a subscription reports turning live (default 'with-position', as 24.x; 'bare' as 23.10; 'none' before). */
  caughtUp: CaughtUpReport;
  /** The server's MaxAppendSize (default 1 MiB). */
  maxAppendSize: number;
}

export class EsdbStandIn {
  readonly log: EsdbLog;
  readonly faults = new Faults();
  readonly calls = new CallLedger();
  readonly options: StandInOptions;
  readonly #instanceId = randomUUID();
  #server: grpc.Server | undefined;
  #port = 0;

  private constructor(options: Partial<StandInOptions>) {
    this.options = { version: '24.10.0', caughtUp: 'with-position', maxAppendSize: 1024 * 1024, ...options };
    this.log = new EsdbLog();
    this.log.maxAppendSize = this.options.maxAppendSize;
  }

  /** Starts a stand-in on a free loopback port. */
  static async start(options: Partial<StandInOptions> = {}): Promise<EsdbStandIn> {
    const standIn = new EsdbStandIn(options);
    await standIn.#listen(0);
    return standIn;
  }

  get port(): number {
    return this.#port;
  }

  /** A single-node connection string, with further client settings (say `{ defaultDeadline: '500' }`). */
  connectionString(settings: Record<string, string> = {}): string {
    const query = new URLSearchParams({ tls: 'false', ...settings });
    return `kurrentdb://127.0.0.1:${this.#port}?${query}`;
  }

  /** A fresh node on the same port: an empty log, no faults planned, nothing counted. Connected clients stay. */
  reset(): void {
    this.log.reset();
    this.log.maxAppendSize = this.options.maxAppendSize;
    this.faults.clear();
    this.calls.reset();
  }

  /**
   * The node goes away and comes back on the same port with its log: every connection and call in flight is
   * cut (clients see UNAVAILABLE), as a restart or a network failure would.
   */
  async restart(): Promise<void> {
    this.#server?.forceShutdown();
    this.#server = undefined;
    await this.#listen(this.#port);
  }

  /** The node stops; calls in flight are cut, and new connections are refused until start is called. */
  stop(): Promise<void> {
    this.#server?.forceShutdown();
    this.#server = undefined;
    return Promise.resolve();
  }

  /** After stop(): listen again on the same port, with the same log. */
  resume(): Promise<void> {
    return this.#listen(this.#port);
  }

  async #listen(port: number): Promise<void> {
    const server = new grpc.Server();
    const streams = streamsService({
      log: this.log,
      faults: this.faults,
      calls: this.calls,
      caughtUp: this.options.caughtUp,
      clock: () => new Date(),
    });
    if (this.options.version === null) delete (streams as Record<string, unknown>)['batchAppend'];
    server.addService(streamsGrpc.StreamsService, streams);
    if (this.options.version !== null) {
      server.addService(serverFeaturesGrpc.ServerFeaturesService, serverFeaturesService(this.options.version, this.faults, this.calls));
    }
    server.addService(gossipGrpc.GossipService, gossipService(() => ({ host: '127.0.0.1', port: this.#port }), this.#instanceId, this.calls));
    this.#port = await new Promise<number>((resolve, reject) =>
      server.bindAsync(`127.0.0.1:${port}`, grpc.ServerCredentials.createInsecure(), (error, bound) => (error ? reject(error) : resolve(bound))),
    );
    this.#server = server;
  }
}
