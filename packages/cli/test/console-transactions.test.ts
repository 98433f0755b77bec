import { ControlRecordType, controlTypeOf } from "@cluster-mirror/protocol";
import { afterEach, describe, expect, it } from "vitest";
import { consume, type ProduceRequest, produce } from "../src/node/console-clients";
import { MirrorNode } from "../src/node/mirror-node";

const nodes: MirrorNode[] = [];
afterEach(() => {
  for (const n of nodes.splice(0)) n.close();
});

const request = (value: string, more: Partial<ProduceRequest>): ProduceRequest => ({
  topic: "t",
  key: undefined,
  value,
  count: 1,
  partition: 0,
  transactionalId: "tx",
  abort: false,
  leaveOpen: false,
  ...more,
});

describe("cluster-mirror produce with a transactional id", () => {
  it("a second produce with the id of an open transaction aborts it instead of joining and committing it", async () => {
    const node = MirrorNode.start({ name: "dr", brokers: 3, sources: [], numStatePartitions: 2 });
    nodes.push(node);
    const dr = node.destination;
    dr.cluster.controller.createTopic({ name: "t", replicaAssignment: [[0, 1, 2]] });

    const first = await produce(dr, request("first", { leaveOpen: true }));
    expect(first.transaction).toBe("open");
    const second = await produce(dr, request("second", {}));
    expect(second.transaction).toBe("committed");

    const leader = dr.cluster.leaderFor("t", 0);
    const kinds = [...leader.replica("t", 0)!.log.batches()].map((b) =>
      b.isControl ? controlTypeOf(b) : "data",
    );
    expect(kinds).toEqual(["data", ControlRecordType.ABORT, "data", ControlRecordType.COMMIT]);
    const committed = await consume(dr, {
      topic: "t",
      group: undefined,
      fromBeginning: true,
      isolation: "read_committed",
      maxMessages: 1,
      timeoutMs: 60_000,
    });
    expect(committed.messages.map((m) => m.value)).toEqual(["second"]);
    expect(dr.cluster.transactions.describeTransaction("tx")?.state).toBe("CompleteCommit");
    // The answer tells the operator that the earlier open transaction was aborted.
    expect([first.abortedOpenTransaction, second.abortedOpenTransaction]).toEqual([false, true]);
  });
});
