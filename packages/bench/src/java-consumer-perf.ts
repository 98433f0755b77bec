import { execFile } from "node:child_process";
import { performance } from "node:perf_hooks";
import { promisify } from "node:util";

const run = promisify(execFile);

/** What Kafka's `ConsumerPerformance` printed for one run, plus the JVM's CPU time. */
export interface JavaConsumerRun {
  /** Records consumed. */
  records: number;
  /** Records per second over the fetch time (after the group joined), as the tool reports it. */
  fetchRecordsPerSec: number;
  /** Records per second over the whole run (group join included), as the tool reports it. */
  recordsPerSec: number;
  /** The tool's fetch time in ms. */
  fetchMs: number;
  /** CPU time (user + system) of the JVM, start-up and JIT included, from /proc; NaN when unreadable. */
  cpuMs: number;
  /** Wall time of the whole JVM run, start-up included. */
  wallMs: number;
}

/**
 * Runs Kafka's own Java consumer benchmark, `org.apache.kafka.tools.ConsumerPerformance`, from the jars the
 * broker runs on (`libs`), reading `messages` records of `topic` from the beginning in a fresh group, and
 * parses its one line of figures (`--hide-header` is not used: the header names the columns).
 */
export async function javaConsumerPerformance(options: {
  libs: string;
  bootstrap: string;
  topic: string;
  messages: number;
  group: string;
  fetchSize: number;
}): Promise<JavaConsumerRun> {
  const started = performance.now();
  const args = [
    "-Xmx512m",
    "-cp",
    `${options.libs}/*`,
    "org.apache.kafka.tools.ConsumerPerformance",
    "--bootstrap-server",
    options.bootstrap,
    "--topic",
    options.topic,
    "--messages",
    String(options.messages),
    "--group",
    options.group,
    "--fetch-size",
    String(options.fetchSize),
    "--timeout",
    "120000",
  ];
  // `bash -c` reports the JVM's CPU time (the `times` builtin: children's user and system seconds).
  const script = `java ${args.map((a) => `'${a}'`).join(" ")} && times`;
  const { stdout } = await run("bash", ["-c", script], { maxBuffer: 16 << 20, timeout: 300_000 });
  const wallMs = performance.now() - started;
  const lines = stdout.split("\n").map((l) => l.trim());
  const headerAt = lines.findIndex((l) => l.startsWith("start.time"));
  if (headerAt < 0 || !lines[headerAt + 1]) {
    throw new Error(`ConsumerPerformance printed no figures:\n${stdout.slice(-2000)}`);
  }
  const names = lines[headerAt]!.split(",").map((s) => s.trim());
  const values = lines[headerAt + 1]!.split(",").map((s) => s.trim());
  const field = (name: string) => {
    const i = names.indexOf(name);
    const v = Number(values[i]);
    if (i < 0 || !Number.isFinite(v))
      throw new Error(`ConsumerPerformance: no ${name} in '${lines[headerAt + 1]}'`);
    return v;
  };
  return {
    records: field("data.consumed.in.nMsg"),
    fetchRecordsPerSec: field("fetch.nMsg.sec"),
    recordsPerSec: field("nMsg.sec"),
    fetchMs: field("fetch.time.ms"),
    cpuMs: childCpuMs(lines),
    wallMs,
  };
}

/** The children's line of bash's `times` ("0m1.234s 0m0.100s" user and system), in ms. */
function childCpuMs(lines: readonly string[]): number {
  const times = lines.filter((l) => /^\d+m[\d.]+s \d+m[\d.]+s$/.test(l));
  const children = times[times.length - 1];
  if (!children) return Number.NaN;
  const [user, sys] = children.split(" ").map((t) => {
    const m = /^(\d+)m([\d.]+)s$/.exec(t)!;
    return (Number(m[1]) * 60 + Number(m[2])) * 1000;
  });
  return user! + sys!;
}
