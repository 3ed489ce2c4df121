/**
 * What the stand-in tells clients about the node: ServerFeatures (the version and the methods it serves; the
 * Node client appends through BatchAppend only when the list names it, the Rust read bridge asks it when it
 * connects) and Gossip (the cluster, here one leader: `kurrentdb+discover://` strings and multi-host strings
 * ask it which node to use).
 *
 * A stand-in without a version serves neither ServerFeatures nor BatchAppend, as servers before 21.10: the
 * clients then fall back to the plain Append call, and the Rust bridge to its defaults.
 */
import type * as grpc from '@grpc/grpc-js';
import serverFeaturesPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/serverfeatures_pb.js';
import gossipPb from '@kurrent/kurrentdb-client/generated/kurrentdb/protocols/v1/gossip_pb.js';
import { delay, type Faults } from './faults.ts';
import type { CallLedger } from './ledger.ts';
import { serverErrors, uuidMessage } from './protocol.ts';

const { SupportedMethods, SupportedMethod } = serverFeaturesPb;
const { ClusterInfo, MemberInfo, EndPoint } = gossipPb;

const STREAMS_METHODS = ['read', 'append', 'delete', 'tombstone', 'batchappend'];

export function serverFeaturesService(version: string, faults: Faults, calls: CallLedger): grpc.UntypedServiceImplementation {
  return {
    async getSupportedMethods(_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) {
      const close = calls.opened('server-features');
      try {
        const fault = faults.take('server-features');
        if (fault?.kind === 'stall') await delay(fault.ms);
        else if (fault) return callback(serverErrors.notReady());
        const methods = new SupportedMethods();
        methods.setEventStoreServerVersion(version);
        const list = [
          ...STREAMS_METHODS.map((name) => ['event_store.client.streams.streams', name] as const),
          ['event_store.client.server_features.serverfeatures', 'getsupportedmethods'] as const,
          ['event_store.client.gossip.gossip', 'read'] as const,
        ].map(([service, name]) => {
          const method = new SupportedMethod();
          method.setServiceName(service);
          method.setMethodName(name);
          return method;
        });
        methods.setMethodsList(list);
        callback(null, methods);
      } finally {
        close();
      }
    },
  };
}

export function gossipService(endpoint: () => { host: string; port: number }, instanceId: string, calls: CallLedger): grpc.UntypedServiceImplementation {
  return {
    read(_call: grpc.ServerUnaryCall<unknown, unknown>, callback: grpc.sendUnaryData<unknown>) {
      const close = calls.opened('gossip');
      const member = new MemberInfo();
      member.setInstanceId(uuidMessage(instanceId, 'string'));
      member.setTimeStamp(String(BigInt(Date.now()) * 10_000n));
      member.setState(MemberInfo.VNodeState.LEADER);
      member.setIsAlive(true);
      const http = new EndPoint();
      http.setAddress(endpoint().host);
      http.setPort(endpoint().port);
      member.setHttpEndPoint(http);
      const info = new ClusterInfo();
      info.setMembersList([member]);
      close();
      callback(null, info);
    },
  };
}
