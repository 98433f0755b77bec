import { describe, expect, it } from "vitest";
import { failedOverOnB, type topology } from "./helpers";

const MIRROR_NAME_CONFIG = "mirror.name";

const setMirrorName = (b: ReturnType<ReturnType<typeof topology>["node"]>, topic: string, value: string) =>
  b.cluster.controller.incrementalAlterConfigs({ type: "topic", name: topic }, [
    { name: MIRROR_NAME_CONFIG, op: "SET", value },
  ]);

describe("a removal racing a re-add's START", () => {
  it("a removal (kafka-configs) that lands while the re-add's START waits for its append is followed by a STOP", async () => {
    const { t, b } = await failedOverOnB();
    const coordinators = b.mirroring.coordinators;
    const original = coordinators.command.bind(coordinators);
    let removed = false;
    coordinators.command = (key, command) => {
      const sent = original(key, command);
      if (command.type === "START" && key.topic === "t" && !removed) {
        removed = true; // the START's PREPARING record appended, not committed: the operator removes t
        setMirrorName(b, "t", "dr.removed");
      }
      return sent;
    };
    setMirrorName(b, "t", "dr"); // the re-add; the metadata manager sends its START on the next turn
    await t.until(() => removed, "the re-add's START");
    coordinators.command = original;
    // The removal's drive (next turn) saw the committed STOPPED and sent nothing: the START's PREPARING then
    // went on to MIRRORING under mirror.name=dr.removed, read-only until the next periodic refresh (30 s).
    await t.advance(5000);
    expect(b.mirroring.coordinators.describe("dr").map((v) => v.state)).toEqual(["STOPPED"]);
    expect(b.cluster.controller.image.partition("t", 0)!.mirrorReadOnly).toBe(false);
  });

  it("a flag clear the controller refuses (failing over) does not cut short the removal's other STOPs", async () => {
    const { t, b } = await failedOverOnB({ topics: ["t", "u"] });
    await t.run(b.mirroring.admin.addTopics("dr", "u", { truncateLocalWrites: true }));
    await t.run(b.mirroring.whenCaughtUp("dr"));
    const stateOf = (topic: string) =>
      b.mirroring.coordinators.describe("dr").find((v) => v.key.topic === topic)?.state;
    expect(stateOf("u")).toBe("MIRRORING");
    // t re-added and removed again before its START (its flag set by mirror.name); u failed over with it
    // (kafka-configs). The metadata controller then fails over before the drive (next turn).
    setMirrorName(b, "t", "dr");
    setMirrorName(b, "t", "dr.removed");
    setMirrorName(b, "u", "dr.removed");
    b.cluster.controller.setAvailable(false);
    await t.advance(200);
    b.cluster.controller.setAvailable(true);
    // The drive's clear of t threw NOT_CONTROLLER out of driveTopics: u, after t, was sent no STOP and kept
    // mirroring (read-only) until the next periodic refresh.
    await t.advance(2000);
    expect(stateOf("u")).toBe("STOPPED");
  });

  it("an add whose drive waits for a loading coordinator does not START a topic removed meanwhile", async () => {
    const { t, b } = await failedOverOnB();
    const image = () => b.cluster.controller.image;
    // The coordinators the add's drive waits for take 2 s to load once t is a mirror again (a big
    // __mirror_state partition loading after an election: the drive's awaitCoordinatorsOf).
    const mirroring = b.mirroring;
    const whenLoaded = mirroring.whenCoordinatorsLoaded.bind(mirroring);
    let waiting = false;
    mirroring.whenCoordinatorsLoaded = async (keys, timeoutMs) => {
      await whenLoaded(keys, timeoutMs);
      if (image().topic("t")!.configs.get(MIRROR_NAME_CONFIG) !== "dr") return;
      waiting = true;
      await new Promise<void>((resolve) => t.scheduler.schedule(resolve, 2000));
    };
    const add = b.mirroring.admin.addTopics("dr", "t", { truncateLocalWrites: true });
    let addDone = false;
    void add.then(
      () => (addDone = true),
      () => (addDone = true),
    );
    await t.until(() => waiting, "the re-add's drive");
    // Meanwhile the operator fails t over again (kafka-configs); the metadata manager's drive makes it writable.
    setMirrorName(b, "t", "dr.removed");
    await t.until(() => image().partition("t", 0)!.mirrorReadOnly === false || addDone, "t writable");
    expect(addDone).toBe(false);
    const producer = b.kafka.producer();
    await t.run(producer.connect());
    const sent = await t.run(
      producer.send({ topic: "t", messages: [{ value: "local", partition: 0 }], acks: -1 }),
    );
    expect(sent[0]?.errorCode).toBe(0);
    const offset = sent[0]!.baseOffset;
    await t.run(add).catch(() => undefined);
    mirroring.whenCoordinatorsLoaded = whenLoaded;
    await t.advance(5000);
    const log = b.cluster.leaderFor("t", 0).replica("t", 0)!.log;
    const data = [...log.batches()].filter((x) => !x.isControl).map((x) => x.baseOffset);
    // The add's drive read t's desired state (ACTIVE) before it waited, and sent START after the removal:
    // PREPARING truncated the acknowledged write.
    expect(data).toContain(BigInt(offset));
  });
});
