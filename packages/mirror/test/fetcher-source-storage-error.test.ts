import { KafkaError } from "@cluster-mirror/protocol";
import { describe, expect, it } from "vitest";
import type { SourceCluster } from "../src/ports";
import { batchBytes, bind, drive, mirrorEnv, produce, TOPIC, valuesBatch } from "./data-helpers";

/**
 * A log dir of the source leader fails (Kafka's JBOD): that broker stays up and answers KAFKA_STORAGE_ERROR
 * for the partitions on the dir (`ReplicaManager.getPartitionOrException`: an Offline partition) while its
 * controller moves their leadership to another replica. Kafka's consumer refreshes its metadata and fetches
 * from the new leader (`FetchCollector.handleInitializeErrors`: KAFKA_STORAGE_ERROR and REPLICA_NOT_AVAILABLE
 * are handled as NOT_LEADER_OR_FOLLOWER). The mirror must too, not fail the partition and route it back to
 * the broker its stale leader cache names.
 */
describe("a source leader's failed log dir (KAFKA_STORAGE_ERROR, REPLICA_NOT_AVAILABLE from the source)", () => {
  for (const [name, code] of [
    ["KAFKA_STORAGE_ERROR", 56],
    ["REPLICA_NOT_AVAILABLE", 9],
  ] as const) {
    it(`${name}: re-routes the partition to the new leader like NOT_LEADER_OR_FOLLOWER, nothing failed or lost`, async () => {
      const offline = new Set<number>();
      const fetchedFrom: number[] = [];
      const env = mirrorEnv({
        sourceBrokers: 2,
        sourceAssignment: [[0, 1]],
        wrapSource: (s): SourceCluster => ({
          ...bind(s),
          fetch: async (request) => {
            fetchedFrom.push(request.brokerId);
            if (!offline.has(request.brokerId)) return s.fetch(request);
            return {
              throttleTimeMs: 0,
              partitions: request.partitions.map((p) => ({
                topic: p.topic,
                partition: p.partition,
                recordSlices: [],
                highWatermark: -1n,
                lastStableOffset: -1n,
                logStartOffset: -1n,
                error: new KafkaError(name, code, true, `broker ${request.brokerId}: ${name}`),
              })),
            };
          },
        }),
      });
      for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`a${i}`]));
      env.manager.addPartition(env.key());
      await drive(env, 100);
      expect(env.manager.metrics().fetchers.map((f) => [f.sourceBrokerId, f.partitions])).toEqual([
        [0, ["orders-0"]],
      ]);
      // Broker 0's log dir fails: it answers the error, its controller elects broker 1.
      offline.add(0);
      env.source.controller.fenceBroker(0);
      // The new source epoch's batches need a destination leader epoch as high (the coordinator's bump).
      env.destination.controller.bumpLeaderEpochs([{ topic: TOPIC, partition: 0, minLeaderEpoch: 10 }]);
      for (let i = 0; i < 3; i++) await produce(env, valuesBatch([`b${i}`]));
      await drive(env, 5000);
      expect(env.events.failures).toEqual([]);
      expect(fetchedFrom.at(-1)).toBe(1);
      expect(batchBytes(env.destination)).toEqual(batchBytes(env.source));
    });
  }
});
