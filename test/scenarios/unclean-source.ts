import type { Topology } from "./helpers";

/**
 * a's `orders` (1 partition, RF 2, unclean leader election on) with 5 records `kept-0..4`, and b's mirror
 * `dr` of it (added, not yet awaited): where the scenarios of an unclean election on the source start.
 */
export async function uncleanSourceOrders(t: Topology) {
  const a = t.node("a");
  const b = t.node("b");
  await t.run(
    a.kafka.admin().createTopics({
      topics: [
        {
          topic: "orders",
          numPartitions: 1,
          replicationFactor: 2,
          configEntries: [{ name: "unclean.leader.election.enable", value: "true" }],
        },
      ],
    }),
  );
  const producer = a.kafka.producer({ idempotent: false });
  await t.run(producer.connect());
  const send = async (value: string) =>
    t.run(producer.send({ topic: "orders", messages: [{ value, partition: 0 }], acks: -1 }));
  for (let i = 0; i < 5; i++) await send(`kept-${i}`);
  await t.run(b.mirroring.admin.createMirror("dr", { "bootstrap.servers": "a:9092" }));
  await t.run(b.mirroring.admin.addTopics("dr", "orders"));

  /** a's metadata of orders-0. */
  const meta = () => a.cluster.controller.image.partition("orders", 0)!;
  const leader = meta().leader;
  const follower = meta().replicas.find((r) => r !== leader)!;

  /**
   * On a, the follower falls out of sync and the leader goes on alone in a new epoch, writing `lost-0..2`
   * (offsets 5-7), which the follower never gets.
   */
  async function leaderGoesOnAlone() {
    a.cluster.setReachable(follower, false);
    a.cluster.controller.alterPartition("orders", 0, {
      leader,
      leaderEpoch: meta().leaderEpoch,
      isr: [leader],
    });
    a.cluster.controller.bumpLeaderEpochs([
      { topic: "orders", partition: 0, minLeaderEpoch: meta().leaderEpoch + 1 },
    ]);
    for (let i = 0; i < 3; i++) await send(`lost-${i}`);
  }

  /** The out-of-sync follower (offsets 0-4 only, nothing of the new epoch) is elected uncleanly. */
  async function electFollowerUncleanly() {
    a.cluster.setReachable(follower, true);
    a.cluster.crashBroker(leader);
    await t.until(() => meta().leader === follower, "unclean election on a");
  }

  return { a, b, send, leaderGoesOnAlone, electFollowerUncleanly };
}
