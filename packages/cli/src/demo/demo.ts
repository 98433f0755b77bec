import { sleep } from "@cluster-mirror/cluster";
import { formatDescribeTable } from "@cluster-mirror/mirror";
import { pino } from "pino";
import { OperationError } from "../commands/cli-errors";
import { mirrorMessages } from "../commands/mirror-messages";
import { formatPreviewTable, formatVerifyTable } from "../commands/mirror-tables";
import { MirrorNode, type NodeCluster } from "../node/mirror-node";
import { type NodeRuntime, startNodeRuntime } from "../node/node-runtime";
import { showLagUntilCaughtUp } from "./lag-progress";
import { CONTROL, controlBatches, leaderLog, partitionsOf, tpName } from "./log-inspect";
import { DemoPrinter } from "./printer";
import { waitUntil } from "./wait";
import { DEMO_GROUP, DEMO_TOPICS, runWorkload, sendOrders } from "./workload";

/** Settings of `cluster-mirror demo`. */
export interface DemoOptions {
  keepRunning: boolean;
  dataDir: string | undefined;
  /** Admin endpoint port with `keepRunning`. */
  port: number;
  seed: number;
  out: (text: string) => void;
  /** Colors and moving progress bars (a terminal). */
  color: boolean;
}

const TOPICS = DEMO_TOPICS.map((t) => t.topic);
const PARTITIONS = DEMO_TOPICS.reduce((n, t) => n + t.partitions, 0);
const FORWARD = "primary-to-dr";
const BACK = "dr-to-primary";
const REGEX = "orders|payments";
const REFRESH = { "mirror.metadata.refresh.interval.ms": "300" };
/** The demo's mirrors refresh metadata every 300 ms, which `--source-bootstrap` alone cannot say. */
const REFRESH_NOTE =
  "(the demo's mirrors also set mirror.metadata.refresh.interval.ms=300, so configs, ACLs and group offsets sync within a second; with the CLI, put it in a --mirror-config file)";

/**
 * The guided demo: two embedded clusters (`primary` and `dr`), a transactional workload with a consumer
 * group and ACLs on the primary, a mirror with a lag progress bar, pause/resume, failover (reporting the
 * ABORT markers and PID resets it appended), new writes on the new primary, failback, and a computed
 * verification of the two clusters. Throws OperationError when a check fails.
 */
export async function runDemo(options: DemoOptions): Promise<void> {
  const p = new DemoPrinter(options.out, options.color);
  const node = MirrorNode.start({
    name: "dr",
    brokers: 3,
    dataDir: options.dataDir,
    sources: [{ name: "primary", brokers: 3 }],
    seed: options.seed,
    numStatePartitions: 4,
    fsync: false,
  });
  const started = node.clock.now();
  let keep = false;
  let runtime: NodeRuntime | undefined;
  try {
    // With --keep-running the admin endpoint is bound first: a port in use fails the demo at once (exit 1),
    // before its steps run, instead of after them.
    runtime = options.keepRunning
      ? await startNodeRuntime({ ...nodeDefaults(), port: options.port }, pino({ level: "warn" }), node)
      : undefined;
    const dr = node.destination;
    const primary = node.cluster("primary");
    p.heading("Two embedded clusters, 3 brokers each");
    for (const c of [primary, dr])
      p.line(`${c.name.padEnd(8)} cluster id ${c.cluster.clusterId}, answers as ${c.bootstrap}`);

    p.heading("Workload on primary: orders, transactions, a consumer group, ACLs");
    const work = await runWorkload(primary, 600);
    p.line(`orders: ${work.ordersSent} keyed messages from an idempotent producer (3 partitions)`);
    p.line(
      `payments: tx-1 committed (${work.committedTxnRecords} records), tx-2 aborted (${work.abortedTxnRecords}), tx-3 left open (producer id ${work.open.producerId})`,
    );
    p.line(`group ${DEMO_GROUP}: consumed and committed ${work.groupCommitted} orders, then left`);
    p.line(
      `ACLs: ${primary.cluster.authorizer.describeAcls().length} literal bindings (alice reads orders, bob writes payments, group ${DEMO_GROUP})`,
    );

    p.heading(`Mirror ${FORWARD} on dr, pulling from primary`);
    const k = `kafka-mirrors --bootstrap-server :${runtime?.adminPort ?? options.port}`;
    const created = await dr.mirroring.admin.createMirror(FORWARD, {
      "bootstrap.servers": primary.bootstrap,
      ...REFRESH,
    });
    p.command(
      `${k} --create --mirror ${FORWARD} --source-bootstrap ${primary.bootstrap}`,
      mirrorMessages.created(created),
    );
    p.line(REFRESH_NOTE);
    const added = await dr.mirroring.admin.addTopics(FORWARD, REGEX);
    p.command(`${k} --add --topic '${REGEX}' --mirror ${FORWARD}`, added.message);
    await showLagUntilCaughtUp(node, dr, FORWARD, PARTITIONS, p, options.color);
    await waitUntil(
      node,
      "configs, ACLs and group offsets to sync to dr",
      async () => (await dr.mirroring.admin.verifyMirror(FORWARD)).ok,
    );
    p.check(true, "caught up: every partition MIRRORING with lag 0; configs, ACLs and group offsets synced");
    const readOnly = await tryWrite(dr);
    p.check(
      readOnly === "READ_ONLY_TOPIC",
      `a write to orders on dr is refused while mirroring (${readOnly})`,
    );

    p.heading("Pause and resume");
    const paused = await dr.mirroring.admin.pauseTopics(FORWARD, "orders");
    p.command(`${k} --pause --topic orders --mirror ${FORWARD}`, paused.message);
    await waitUntil(node, "orders to be PAUSED", async () =>
      (await dr.mirroring.admin.describe(FORWARD))
        .filter((r) => r.topic === "orders")
        .every((r) => r.state === "PAUSED"),
    );
    const producer = primary.kafka.producer({ idempotent: true });
    await producer.connect();
    await sendOrders(producer, work.ordersSent, 60);
    await sleepOn(node, 500);
    const behind = logEnd(primary, "orders", "highWatermark") - logEnd(dr, "orders", "logEndOffset");
    p.check(
      behind === 60n,
      `60 more orders written on primary while paused: dr is ${behind} offsets behind on orders and stays read-only`,
    );
    const resumed = await dr.mirroring.admin.resumeTopics(FORWARD, "orders");
    p.command(`${k} --resume --topic orders --mirror ${FORWARD}`, resumed.message);
    await showLagUntilCaughtUp(node, dr, FORWARD, PARTITIONS, p, options.color);

    p.heading("Failover: dr becomes the primary");
    const parts = partitionsOf(dr.cluster, TOPICS);
    const abortsBefore = new Map(
      parts.map((tp) => [tpName(tp), controlBatches(dr.cluster, tp, CONTROL.ABORT).length]),
    );
    const epochsBefore = new Map(
      parts.map((tp) => [
        tpName(tp),
        dr.cluster.controller.image.partition(tp.topic, tp.partition)!.leaderEpoch,
      ]),
    );
    const preview = await dr.mirroring.admin.previewFailover(FORWARD, REGEX);
    p.command(
      `${k} --failover-preview --topic '${REGEX}' --mirror ${FORWARD}`,
      formatPreviewTable(FORWARD, preview).trimEnd(),
    );
    const previewedAborts = preview.reduce((n, r) => n + r.openTransactions.length, 0);
    const removed = await dr.mirroring.admin.removeTopics(FORWARD, REGEX);
    p.command(`${k} --remove --topic '${REGEX}' --mirror ${FORWARD}`, removed.message);
    await waitUntil(node, "every partition to be STOPPED", async () =>
      (await dr.mirroring.admin.describe(FORWARD)).every((r) => r.state === "STOPPED"),
    );
    let aborted = 0;
    let resets = 0;
    for (const tp of parts) {
      const aborts = controlBatches(dr.cluster, tp, CONTROL.ABORT).slice(abortsBefore.get(tpName(tp)) ?? 0);
      const reset = controlBatches(dr.cluster, tp, CONTROL.MIRROR_PID_RESET);
      aborted += aborts.length;
      resets += reset.length === 1 ? 1 : 0;
      const epoch = dr.cluster.controller.image.partition(tp.topic, tp.partition)!.leaderEpoch;
      const txt = aborts.map((a) => `ABORT for producer id ${a.producerId} at offset ${a.offset}`).join(", ");
      p.line(
        `${tpName(tp).padEnd(11)} ${txt || "no open transaction"}; MIRROR_PID_RESET at offset ${reset[0]?.offset ?? "-"}; leader epoch ${epochsBefore.get(tpName(tp))} -> ${epoch}`,
      );
    }
    p.check(
      aborted === 2 && previewedAborts === aborted,
      `failover aborted the open transaction tx-3: ${aborted} ABORT marker(s) appended (its 2 partitions), as the preview said (${previewedAborts})`,
    );
    p.check(
      resets === parts.length,
      `one MIRROR_PID_RESET on ${resets}/${parts.length} partitions: stale producer ids are gone`,
    );
    const committedOnDr = await readCommitted(dr, "payments");
    p.check(
      committedOnDr === work.committedTxnRecords,
      `read_committed consumers on dr see ${committedOnDr} payments: tx-1 only (tx-2 aborted on both, tx-3 by the failover)`,
    );

    p.heading("New writes on the new primary (dr)");
    const drProducer = dr.kafka.producer({ idempotent: true });
    await drProducer.connect();
    await sendOrders(drProducer, 10_000, 40);
    const pid = drProducer.producerId();
    p.line(
      `40 orders written on dr by a fresh producer: producer id ${pid?.producerId}, epoch ${pid?.producerEpoch}, sequences from 0`,
    );
    await drProducer.disconnect();
    await dr.mirroring.admin.deleteMirror(FORWARD);
    p.command(`${k} --delete --mirror ${FORWARD}`, mirrorMessages.deleted(FORWARD));
    // The old primary's application gives up on its open transaction: a divergent tail failback truncates.
    await work.open.txn.abort();
    await work.open.producer.disconnect();
    await producer.disconnect();
    p.line("on primary, the stale tx-3 is aborted locally: a divergent tail the failback will truncate");

    p.heading(`Failback: primary mirrors from dr (${BACK})`);
    const createdBack = await primary.mirroring.admin.createMirror(BACK, {
      "bootstrap.servers": dr.bootstrap,
      ...REFRESH,
    });
    p.command(
      `${k} --cluster primary --create --mirror ${BACK} --source-bootstrap ${dr.bootstrap}`,
      mirrorMessages.created(createdBack),
    );
    const back = await primary.mirroring.admin.addTopics(BACK, REGEX);
    p.command(`${k} --cluster primary --add --topic '${REGEX}' --mirror ${BACK}`, back.message);
    await showLagUntilCaughtUp(node, primary, BACK, PARTITIONS, p, options.color);
    await waitUntil(
      node,
      "configs, ACLs and group offsets to converge",
      async () => (await primary.mirroring.admin.verifyMirror(BACK)).ok,
      5_000,
    ).catch(() => undefined);

    p.heading("Verification: dr (new primary) vs primary (now its mirror)");
    const verification = await primary.mirroring.admin.verifyMirror(BACK);
    p.command(
      `cluster-mirror verify --bootstrap-server :${runtime?.adminPort ?? options.port} --cluster primary --mirror ${BACK}`,
      formatVerifyTable(verification).trimEnd(),
    );
    const differing = verification.checks.filter((c) => !c.ok).map((c) => c.check);
    p.check(
      verification.ok,
      verification.ok
        ? `verify: source and destination agree on all ${verification.checks.length} checks`
        : `verify: ${differing.join(", ")} differ (see the table)`,
    );
    const pidResetsOnPrimary = parts.filter(
      (tp) => controlBatches(primary.cluster, tp, CONTROL.MIRROR_PID_RESET).length === 1,
    ).length;
    p.check(
      pidResetsOnPrimary === parts.length,
      `dr's MIRROR_PID_RESET came back as-is on ${pidResetsOnPrimary}/${parts.length} partitions`,
    );
    const lsoOk = parts.every((tp) => {
      const log = leaderLog(dr.cluster, tp);
      return log.lastStableOffset === log.highWatermark;
    });
    p.check(lsoOk, "no hanging transaction on dr: last stable offset = high watermark on every partition");
    p.command(
      `${k} --cluster primary --describe --mirror ${BACK}`,
      formatDescribeTable(await primary.mirroring.admin.describe(BACK)),
    );
    const failed = differing.length + (pidResetsOnPrimary === parts.length ? 0 : 1) + (lsoOk ? 0 : 1);
    const seconds = ((node.clock.now() - started) / 1000).toFixed(1);
    options.out(`\n${failed === 0 ? "All checks passed" : `${failed} check(s) failed`} in ${seconds}s.\n`);
    if (failed > 0)
      throw new OperationError(`the demo's verification failed (${failed} check(s)); see the ✗ lines above`);

    if (runtime) {
      keep = true; // runtime.close() closes the node
      await serve(runtime, options);
    }
  } finally {
    // A failed run must not leave the endpoint listening: the process would never exit.
    if (!keep) await (runtime ? runtime.close() : node.close());
  }
}

async function serve(runtime: NodeRuntime, options: DemoOptions): Promise<void> {
  // Commands a user can paste in the repository's root, where `kafka-mirrors` is not on the PATH.
  const k = `node packages/cli/bin/kafka-mirrors.mjs --bootstrap-server :${runtime.adminPort}`;
  const cm = "node packages/cli/bin/cluster-mirror.mjs";
  options.out(
    [
      "",
      `Still running; the admin endpoint is 127.0.0.1:${runtime.adminPort} (dr is its destination). Try, in the repository's root:`,
      `  ${k} --list --cluster primary`,
      `  ${k} --describe --cluster primary --mirror ${BACK}`,
      `  ${cm} produce --bootstrap-server :${runtime.adminPort} --topic orders --value hello`,
      `  ${cm} consume --bootstrap-server :${runtime.adminPort} --cluster primary --topic orders --from-beginning --max-messages 5`,
      `The admin API needs its token: these commands find it on their own (same user, same host); elsewhere pass --token or set CLUSTER_MIRROR_TOKEN${runtime.adminTokenFile ? ` (it is in ${runtime.adminTokenFile})` : ""}.`,
      "Ctrl-C stops it.",
      "",
    ].join("\n"),
  );
  await new Promise<void>((resolve) => {
    const stop = () => void runtime.close().then(resolve, resolve);
    process.once("SIGINT", stop);
    process.once("SIGTERM", stop);
  });
}

function nodeDefaults() {
  return { name: "dr", brokers: 3, sources: [] };
}

/** Sum over a topic's partitions of the leader's high watermark or log end offset. */
function logEnd(c: NodeCluster, topic: string, which: "highWatermark" | "logEndOffset"): bigint {
  return partitionsOf(c.cluster, [topic]).reduce((n, tp) => n + leaderLog(c.cluster, tp)[which], 0n);
}

function sleepOn(node: MirrorNode, ms: number): Promise<void> {
  return sleep(node.scheduler, ms);
}

async function tryWrite(c: NodeCluster): Promise<string> {
  const producer = c.kafka.producer({ idempotent: true, retry: { retries: 0 } });
  await producer.connect();
  try {
    await producer.send({ topic: "orders", messages: [{ key: "x", value: "too early" }] });
    return "accepted";
  } catch (error) {
    return (error as { errorName?: string }).errorName ?? String(error);
  } finally {
    await producer.disconnect();
  }
}

async function readCommitted(c: NodeCluster, topic: string): Promise<number> {
  const consumer = c.kafka.consumer({ groupId: "demo-verify", isolation: "read_committed" });
  await consumer.connect();
  await consumer.subscribe({ topic, fromBeginning: true });
  let n = 0;
  for (let i = 0; i < 10; i++) n += (await consumer.poll()).length;
  await consumer.disconnect();
  await c.kafka.admin().deleteGroups(["demo-verify"]);
  return n;
}
