import * as fs from "node:fs";
import * as path from "node:path";
import { afterEach, describe, expect, it } from "vitest";
import {
  BIN,
  CLI_TEST_TIMEOUT_MS,
  cm,
  describeRows,
  failureLine,
  freePort,
  getJson,
  killAll,
  mirrors,
  run,
  startNode,
  tempDir,
  waitFor,
  waitForMirror,
} from "./cli-harness";

afterEach(() => killAll());

describe("kafka-mirrors against a running node", { timeout: CLI_TEST_TIMEOUT_MS }, () => {
  it("drives every command: create, list, add, describe (table, --json, --failed), pause, resume, stop, start, delete", async () => {
    const node = await startNode(tempDir("cm-cmds"));
    const port = node.port;
    expect(
      (await cm("create-topic", port, "--cluster", "primary", "--topic", "orders", "--partitions", "2")).code,
    ).toBe(0);
    expect((await cm("create-topic", port, "--cluster", "primary", "--topic", "payments")).code).toBe(0);
    const produced = await cm(
      "produce",
      port,
      "--cluster",
      "primary",
      "--topic",
      "orders",
      "--count",
      "10",
      "--value",
      "o",
    );
    expect(produced.stdout).toMatch(/^Produced 10 message\(s\) to orders/);
    await cm(
      "produce",
      port,
      "--cluster",
      "primary",
      "--topic",
      "payments",
      "--value",
      "p1",
      "--transactional-id",
      "tx-a",
    );
    await cm(
      "produce",
      port,
      "--cluster",
      "primary",
      "--topic",
      "payments",
      "--value",
      "p2",
      "--transactional-id",
      "tx-b",
      "--abort",
    );

    const created = await mirrors(
      port,
      "--create",
      "--mirror",
      "my-mirror",
      "--source-bootstrap",
      "primary:9092",
    );
    expect(created.code).toBe(0);
    expect(created.stdout).toMatch(
      /^Created mirror my-mirror from primary:9092 \(source cluster id \S+\)\n$/,
    );
    const configFile = path.join(tempDir("cm-conf"), "src.properties");
    fs.writeFileSync(configFile, "bootstrap.servers=primary:9092\nmirror.metadata.refresh.interval.ms=500\n");
    expect(
      (await mirrors(port, "--create", "--mirror", "new-mirror", "--mirror-config", configFile)).code,
    ).toBe(0);

    const list = await mirrors(port, "--list");
    expect(list.code).toBe(0);
    expect(list.stdout.split("\n")[0]).toMatch(
      /^MIRROR\s+TOPICS\s+SOURCE-CLUSTER-ID\s+SOURCE-BOOTSTRAP-SERVER$/,
    );
    expect(list.stdout).toMatch(/my-mirror\s+0\s+\S+\s+primary:9092/);
    expect(list.stdout).toMatch(/new-mirror\s+0\s+\S+\s+primary:9092/);

    const added = await mirrors(
      port,
      "--add",
      "--topic",
      "orders",
      "--mirror",
      "my-mirror",
      "--replication-factor",
      "2",
    );
    expect(added).toMatchObject({
      code: 0,
      stdout: "Added 1 topic(s) to mirror my-mirror: [orders]\n",
      stderr: "",
    });
    const started = await mirrors(port, "--start", "--topic", "pay.*", "--mirror", "new-mirror");
    expect(started.stdout).toBe("Added 1 topic(s) to mirror new-mirror: [payments]\n");
    // New patterns that no longer match a mirrored topic: it stays mirrored, and --alter says so.
    const narrowed = await mirrors(
      port,
      "--alter",
      "--mirror",
      "new-mirror",
      "--add-config",
      "topics.include=refunds",
    );
    expect(narrowed.code, narrowed.stderr).toBe(0);
    expect(narrowed.stdout).toBe(
      "Altered mirror new-mirror: set topics.include\n" +
        "Note: 1 topic(s) of mirror new-mirror no longer match its topics.include/topics.exclude but are still mirrored: [payments]. Patterns only choose which source topics are added; to stop mirroring these, fail them over (--remove --mirror new-mirror --topic REGEX) or pause them (--pause).\n",
    );
    const widened = await mirrors(
      port,
      "--alter",
      "--mirror",
      "new-mirror",
      "--add-config",
      "topics.include=pay.*",
    );
    expect(widened.stdout).toBe("Altered mirror new-mirror: set topics.include\n");
    await waitForMirror(port, "my-mirror", { caughtUp: true });
    await waitForMirror(port, "new-mirror", { caughtUp: true });
    expect(await describeRows(port)).toHaveLength(3);

    const table = await mirrors(port, "--describe");
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split("\n");
    expect(lines[0]).toBe(
      "MIRROR                         TOPIC                                    PARTITION  SOURCE-OFFSET   DESTINATION-OFFSET LAG      STATE       ",
    );
    expect(lines.slice(1).map((l) => l.replace(/\s+/g, " ").trim())).toEqual([
      expect.stringMatching(/^my-mirror orders 0 \d+ \d+ 0 MIRRORING$/),
      expect.stringMatching(/^my-mirror orders 1 \d+ \d+ 0 MIRRORING$/),
      "new-mirror payments 0 4 4 0 MIRRORING",
    ]);
    const json = await mirrors(port, "--describe", "--mirror", "new-mirror", "--json");
    expect(JSON.parse(json.stdout)).toEqual([
      expect.objectContaining({
        mirror: "new-mirror",
        topic: "payments",
        partition: 0,
        sourceOffset: 4,
        lag: 0,
        state: "MIRRORING",
      }),
    ]);
    const failed = await mirrors(port, "--describe", "--failed");
    expect(failed.stdout.trimEnd().split("\n")).toEqual([
      expect.stringMatching(/^MIRROR\s+TOPIC.*STATE\s+RETRY\s+ERROR$/),
    ]);

    expect((await mirrors(port, "--pause", "--topic", "orders", "--mirror", "my-mirror")).stdout).toBe(
      "Paused mirroring for 1 topic(s): [orders]\n",
    );
    await waitForMirror(port, "my-mirror", { state: "PAUSED" });
    expect((await mirrors(port, "--resume", "--topic", "orders", "--mirror", "my-mirror")).stdout).toBe(
      "Resumed mirroring for 1 topic(s): [orders]\n",
    );
    await waitForMirror(port, "my-mirror", { state: "MIRRORING" });
    // --recover retries FAILED partitions only: none here.
    expect((await mirrors(port, "--recover", "--topic", "orders", "--mirror", "my-mirror")).stdout).toBe(
      "No partition of [orders] in mirror my-mirror is FAILED: nothing to recover.\n",
    );

    // Read the mirror through the node, then fail over and write to it.
    const consumed = await cm(
      "consume",
      port,
      "--topic",
      "payments",
      "--from-beginning",
      "--group",
      "g1",
      "--isolation",
      "read_committed",
    );
    expect(consumed.stdout).toBe("p1\n");
    expect(consumed.stderr).toBe("Processed a total of 1 messages\n");
    expect((await mirrors(port, "--stop", "--topic", "orders", "--mirror", "my-mirror")).stdout).toBe(
      "Removed 1 topic(s) from mirror my-mirror: [orders]\n",
    );
    await waitForMirror(port, "my-mirror", { state: "STOPPED" });
    expect((await cm("produce", port, "--topic", "orders", "--value", "after failover")).code).toBe(0);
    expect((await mirrors(port, "--remove", "--topic", "payments", "--mirror", "new-mirror")).stdout).toBe(
      "Removed 1 topic(s) from mirror new-mirror: [payments]\n",
    );
    await waitForMirror(port, "new-mirror", { state: "STOPPED" });
    expect(await mirrors(port, "--delete", "--mirror", "my-mirror")).toMatchObject({
      code: 0,
      stdout: "Deleted mirror my-mirror\n",
    });
    expect((await mirrors(port, "--list")).stdout).not.toContain("my-mirror");

    const metrics = await (await fetch(`http://127.0.0.1:${node.metricsPort}/metrics`)).text();
    expect(metrics).toContain(
      'kafka_server_cluster_mirror_partition_count{mirror="new-mirror",state="STOPPED"} 1',
    );
    expect(node.output()).toContain('"event":"mirror.partition.state"');
  });

  it("logs a matched source topic it cannot mirror, because a local topic has the name, once as mirror.topic_skipped", async () => {
    const node = await startNode(tempDir("cm-skipped"));
    const port = node.port;
    expect((await cm("create-topic", port, "--cluster", "primary", "--topic", "orders")).code).toBe(0);
    expect((await cm("create-topic", port, "--topic", "orders")).code).toBe(0);
    const file = path.join(tempDir("cm-skipped-config"), "mirror.properties");
    fs.writeFileSync(
      file,
      "bootstrap.servers=primary:9092\ntopics.include=ord.*\nmirror.metadata.refresh.interval.ms=200\n",
    );
    expect((await mirrors(port, "--create", "--mirror", "dr", "--mirror-config", file)).code).toBe(0);
    const skipped = () =>
      node
        .output()
        .split("\n")
        .filter((l) => l.includes('"event":"mirror.topic_skipped"'));
    await waitFor("the skipped topic logged", () => skipped().length > 0, 60_000);
    expect(skipped()[0]).toContain(
      "mirror dr: topic 'orders' on the source matches the mirror's topics.include, but this cluster has a topic of that name of its own",
    );
    // Refreshes go on every 200 ms; the warning is not repeated.
    await new Promise((resolve) => setTimeout(resolve, 1_500));
    expect(skipped()).toHaveLength(1);
    expect(node.output()).not.toContain('"event":"mirror.sync_error"');
  });

  it("--describe-config shows a mirror's config; --alter changes it, refusing another cluster and bad keys", async () => {
    const node = await startNode(tempDir("cm-alter"));
    const port = node.port;
    expect(
      (await mirrors(port, "--create", "--mirror", "m", "--source-bootstrap", "primary:9092")).code,
    ).toBe(0);
    const config = async () => {
      const r = await mirrors(port, "--describe-config", "--mirror", "m");
      expect(r.code, r.stderr).toBe(0);
      return r.stdout;
    };
    const before = await config();
    expect(before).toMatch(/^CONFIG +VALUE +SOURCE\n/);
    expect(before).toMatch(/\nbootstrap\.servers +primary:9092 +set\n/);
    expect(before).toMatch(/\nlog\.start\.offset\.sync\.enable +true +set\n/);
    expect(before).toMatch(/\ntopics\.exclude +__\.\* +default\n/);

    const conf = path.join(tempDir("cm-alter-conf"), "alter.properties");
    fs.writeFileSync(conf, "groups.include=billing.*\n");
    const altered = await mirrors(
      port,
      "--alter",
      "--mirror",
      "m",
      "--mirror-config",
      conf,
      "--add-config",
      "topics.exclude=internal\\..*",
      "--delete-config",
      "log.start.offset.sync.enable",
    );
    expect(altered.code, altered.stderr).toBe(0);
    expect(altered.stdout).toBe(
      "Altered mirror m: set groups.include, topics.exclude; deleted log.start.offset.sync.enable\n",
    );
    const after = await config();
    expect(after).toMatch(/\ntopics\.exclude +internal\\\.\.\* +set\n/);
    expect(after).toMatch(/\ngroups\.include +billing\.\* +set\n/);
    expect(after).toMatch(/\nlog\.start\.offset\.sync\.enable +false +default\n/);
    const json = await mirrors(port, "--describe-config", "--mirror", "m", "--json");
    expect(JSON.parse(json.stdout).configs).toContainEqual({
      name: "topics.exclude",
      value: "internal\\..*",
      isDefault: false,
      isSensitive: false,
    });

    // The destination itself is not this mirror's source: refused, nothing changed.
    const health = await getJson<{ destination: string; clusters: { name: string; bootstrap: string }[] }>(
      port,
      "/v1/health",
    );
    const own = health.clusters.find((c) => c.name === health.destination)!.bootstrap;
    const other = await mirrors(port, "--alter", "--mirror", "m", "--add-config", `bootstrap.servers=${own}`);
    expect(other.code).toBe(1);
    expect(failureLine(other)).toMatch(/reaches cluster \S+, but mirror 'm' copies cluster \S+/);
    const typo = await mirrors(port, "--alter", "--mirror", "m", "--add-config", "topic.include=x");
    expect(typo.code).toBe(1);
    expect(failureLine(typo)).toMatch(/Did you mean 'topics\.include'/);
    expect(await config()).toBe(after);

    const empty = path.join(tempDir("cm-alter-empty"), "empty.properties");
    fs.writeFileSync(empty, "# nothing\n");
    for (const [args, message] of [
      [["--alter", "--mirror", "m"], /--alter needs what to change/],
      [["--alter", "--mirror", "m", "--add-config", "novalue"], /--add-config 'novalue' is not KEY=VALUE/],
      [
        ["--alter", "--mirror", "m", "--add-config", "topics.include=a,groups.include=b"],
        /holds another setting \(groups\.include=\.\.\.\): give each KEY=VALUE its own --add-config/,
      ],
      [["--alter", "--mirror", "m", "--mirror-config", empty], /has no settings: nothing to change/],
      [["--describe", "--add-config", "a=b"], /--add-config cannot be used with --describe/],
      [["--describe-config"], /--describe-config needs --mirror NAME/],
    ] as [string[], RegExp][]) {
      const r = await mirrors(port, ...args);
      expect(r.code, args.join(" ")).toBe(2);
      expect(failureLine(r)).toMatch(message);
    }
  });

  it("refuses bad input with one Error line: exit 2 for usage, 1 for operation errors", async () => {
    const node = await startNode(tempDir("cm-bad"));
    const port = node.port;
    await cm("create-topic", port, "--cluster", "primary", "--topic", "orders");
    expect(
      (await mirrors(port, "--create", "--mirror", "m", "--source-bootstrap", "primary:9092")).code,
    ).toBe(0);
    expect((await mirrors(port, "--add", "--topic", "orders", "--mirror", "m")).code).toBe(0);
    const conf = path.join(tempDir("cm-bad-conf"), "x.properties");
    fs.writeFileSync(conf, "bootstrap.servers=primary:9092\n");

    const usage: [string[], RegExp][] = [
      [[], /no action given: use exactly one of --create/],
      [
        ["--add", "--remove", "--topic", "orders", "--mirror", "m"],
        /--add and --remove cannot be used together/,
      ],
      [["--add", "--mirror", "m"], /--add needs --topic REGEX/],
      [["--pause", "--topic", "orders"], /--pause needs --mirror NAME/],
      [["--delete"], /--delete needs --mirror NAME/],
      [["--create", "--mirror", "x"], /--create needs --source-bootstrap SERVERS or --mirror-config FILE/],
      [
        ["--create", "--mirror", "x", "--source-bootstrap", "primary:9092", "--mirror-config", conf],
        /cannot be used together/,
      ],
      [
        ["--create", "--mirror", "x", "--mirror-config", "/nonexistent/file.properties"],
        /cannot read --mirror-config/,
      ],
      [["--list", "--json"], /--json cannot be used with --list/],
      [["--describe", "--topic", "orders"], /--topic cannot be used with --describe/],
      [
        ["--add", "--topic", "orders", "--mirror", "m", "--replication-factor", "zero"],
        /--replication-factor must be an integer >= 1, got 'zero'/,
      ],
      [["--frobnicate"], /Unknown option '--frobnicate'/],
      // Checked before the node is asked, in the node's words for it.
      [["--add", "--topic", "(orders", "--mirror", "m"], /Invalid regular expression '\(orders' in --topic/],
    ];
    const usageResults = await Promise.all(usage.map(([args]) => mirrors(port, ...args)));
    for (const [i, [args, message]] of usage.entries()) {
      const r = usageResults[i]!;
      expect(r.code, args.join(" ")).toBe(2);
      expect(failureLine(r)).toMatch(message);
      expect(r.stdout).toBe("");
    }
    const missingBootstrap = await run(BIN.kafkaMirrors, ["--list"]);
    expect(missingBootstrap.code).toBe(2);
    expect(failureLine(missingBootstrap)).toMatch(/--bootstrap-server is required/);

    const operation: [string[], RegExp][] = [
      [["--describe", "--mirror", "nope"], /^Error: Mirror 'nope' does not exist \(known mirrors: m\)/],
      [["--add", "--topic", "orders", "--mirror", "nope"], /Mirror 'nope' does not exist/],
      [["--delete", "--mirror", "nope"], /Mirror 'nope' does not exist/],
      [
        ["--pause", "--topic", "nothing-matches", "--mirror", "m"],
        /No topic of mirror 'm' matches 'nothing-matches'/,
      ],
      [["--create", "--mirror", "m", "--source-bootstrap", "primary:9092"], /Mirror 'm' already exists/],
      [
        ["--create", "--mirror", "bad name!", "--source-bootstrap", "primary:9092"],
        /Mirror name 'bad name!' is invalid/,
      ],
      [["--create", "--mirror", "x", "--source-bootstrap", "nowhere:9092"], /nowhere:9092/],
      [["--delete", "--mirror", "m"], /Remove them first/],
    ];
    const operationResults = await Promise.all(operation.map(([args]) => mirrors(port, ...args)));
    for (const [i, [args, message]] of operation.entries()) {
      const r = operationResults[i]!;
      expect(r.code, args.join(" ")).toBe(1);
      expect(failureLine(r)).toMatch(message);
    }
    const closed = await freePort();
    const unreachable = await mirrors(closed, "--list");
    expect(unreachable.code).toBe(1);
    expect(failureLine(unreachable)).toMatch(
      /cannot reach the cluster-mirror node at 127\.0\.0\.1:\d+ \(ECONNREFUSED\)/,
    );
  });
});
