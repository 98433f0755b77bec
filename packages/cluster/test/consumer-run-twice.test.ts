import { describe, expect, it } from "vitest";
import { clientCluster } from "./clients-helpers";

describe("consumer.run() while the consumer runs, as kafkajs (it logs 'already running' and returns)", () => {
  it("resolves and changes nothing: the first run's handler keeps every record, the second config is not looked at", async () => {
    const { kafka, run } = clientCluster();
    await run(kafka.admin().createTopics({ topics: [{ topic: "t", numPartitions: 1 }] }));
    const producer = kafka.producer();
    await run(producer.connect());
    await run(producer.send({ topic: "t", messages: [{ value: "m1" }] }));
    const consumer = kafka.consumer({ groupId: "g" });
    await run(consumer.connect());
    await run(consumer.subscribe({ topic: "t", fromBeginning: true }));
    const first: string[] = [];
    const second: string[] = [];
    let next: () => void = () => {};
    let delivered = new Promise<void>((resolve) => {
      next = resolve;
    });
    await run(
      consumer.run({
        eachMessage: async ({ message }) => {
          first.push(String(message.value));
          next();
        },
      }),
    );
    await run(delivered);
    // Before: refused with INVALID_REQUEST ("the consumer is already running"), where kafkajs resolves.
    await run(consumer.run({ eachMessage: async ({ message }) => void second.push(String(message.value)) }));
    // Not even checked: kafkajs returns before it builds anything from the config.
    await run(consumer.run({ eachMessage: "not a function" } as never));
    delivered = new Promise<void>((resolve) => {
      next = resolve;
    });
    await run(producer.send({ topic: "t", messages: [{ value: "m2" }] }));
    await run(delivered);
    expect(first).toEqual(["m1", "m2"]);
    expect(second).toEqual([]);
    await run(consumer.disconnect());
  });
});
