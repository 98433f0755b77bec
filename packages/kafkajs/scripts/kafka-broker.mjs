#!/usr/bin/env node
// A real Apache Kafka broker for the tests (3.9.1; `KAFKA_VERSION=4.1.1` picks another, 4.x through
// ../broker/pom-kafka4.xml): jars from Maven Central (`mvn dependency:copy-dependencies` of ../broker/pom.xml
// into node_modules/.cache, keyed on the pom's hash and the version, never committed), one KRaft node
// (broker + controller) on 127.0.0.1 with free ports and a temp log dir. Used by test/broker/global-setup.ts;
// run by hand: `node packages/kafkajs/scripts/kafka-broker.mjs` starts one and prints its bootstrap address
// until Ctrl-C.
import { execFile, spawn } from "node:child_process";
import { createHash, randomBytes } from "node:crypto";
import * as fs from "node:fs";
import * as net from "node:net";
import * as os from "node:os";
import * as path from "node:path";
import { fileURLToPath } from "node:url";
import { promisify } from "node:util";

const run = promisify(execFile);
const here = path.dirname(fileURLToPath(import.meta.url));
/** The Apache Kafka version the tests run: 3.9.1 unless `KAFKA_VERSION` names another (3.x or 4.x). */
export const KAFKA_VERSION = process.env.KAFKA_VERSION?.trim() || "3.9.1";
/** Kafka 4 logs through log4j2 (its own pom and logging config); 3.x through reload4j. */
const KAFKA_4 = Number(KAFKA_VERSION.split(".")[0]) >= 4;
const pom = path.join(here, "..", "broker", KAFKA_4 ? "pom-kafka4.xml" : "pom.xml");
const READY = "Kafka Server started";

/** Java or Maven is missing: says what to install. */
export class BrokerToolMissingError extends Error {
  constructor(tool, cause) {
    super(
      `The real-broker tests need ${tool} on PATH (Java 17+ runs Apache Kafka ${KAFKA_VERSION}; Maven fetches its jars from Maven Central). Install it, e.g. 'apt-get install openjdk-17-jre-headless maven', then run the tests again. (${cause})`,
    );
    this.name = "BrokerToolMissingError";
  }
}

async function requireTool(tool, args) {
  try {
    await run(tool, args, { timeout: 60_000 });
  } catch (error) {
    throw new BrokerToolMissingError(tool, error instanceof Error ? error.message : String(error));
  }
}

/**
 * The broker's jar folder, downloading it first when missing. A `.complete` marker is written after the copy,
 * so a half-finished copy is never used. Returns the folder and how long the download took (0 when cached).
 */
export async function ensureKafkaJars({ log = () => {} } = {}) {
  await requireTool("java", ["-version"]);
  const hash = createHash("sha256")
    .update(fs.readFileSync(pom))
    .update(KAFKA_VERSION)
    .digest("hex")
    .slice(0, 12);
  const cache = path.join(here, "..", "node_modules", ".cache", `kafka-broker-${hash}`);
  const libs = path.join(cache, "libs");
  if (fs.existsSync(path.join(cache, ".complete"))) return { libs, downloadMs: 0 };
  await requireTool("mvn", ["-v"]);
  fs.rmSync(cache, { recursive: true, force: true });
  fs.mkdirSync(cache, { recursive: true });
  log(`fetching Apache Kafka ${KAFKA_VERSION} jars from Maven Central into ${libs} ...`);
  const started = performance.now();
  try {
    await run(
      "mvn",
      [
        "-q",
        "-B",
        "-f",
        pom,
        "dependency:copy-dependencies",
        `-Dkafka.version=${KAFKA_VERSION}`,
        "-DincludeScope=runtime",
        `-DoutputDirectory=${libs}`,
      ],
      { timeout: 20 * 60_000, maxBuffer: 64 << 20 },
    );
  } catch (error) {
    throw new Error(
      `mvn could not fetch the Kafka broker jars (is Maven Central reachable?): ${error.stderr || error.stdout || error.message}`,
    );
  }
  fs.writeFileSync(path.join(cache, ".complete"), new Date().toISOString());
  const downloadMs = Math.round(performance.now() - started);
  log(`fetched ${fs.readdirSync(libs).length} jars in ${(downloadMs / 1000).toFixed(1)} s`);
  return { libs, downloadMs };
}

function freePort() {
  return new Promise((resolve, reject) => {
    const server = net.createServer();
    server.unref();
    server.on("error", reject);
    server.listen(0, "127.0.0.1", () => {
      const { port } = server.address();
      server.close(() => resolve(port));
    });
  });
}

/** Kafka's Uuid: 16 random bytes as base64url, never starting with '-' (argparse4j would read an option). */
function randomClusterId() {
  for (;;) {
    const id = randomBytes(16).toString("base64url");
    if (id[0] !== "-") return id;
  }
}

const LOG4J = `log4j.rootLogger=WARN, stdout
log4j.appender.stdout=org.apache.log4j.ConsoleAppender
log4j.appender.stdout.layout=org.apache.log4j.PatternLayout
log4j.appender.stdout.layout.ConversionPattern=[%d] %p %m (%c)%n
log4j.logger.kafka.server.KafkaRaftServer=INFO
log4j.logger.kafka.server.BrokerLifecycleManager=INFO
`;

/** The same logging for Kafka 4 (log4j2). */
const LOG4J2 = `status=warn
appender.stdout.type=Console
appender.stdout.name=STDOUT
appender.stdout.layout.type=PatternLayout
appender.stdout.layout.pattern=[%d] %p %m (%c)%n
rootLogger.level=WARN
rootLogger.appenderRef.stdout.ref=STDOUT
logger.raft.name=kafka.server.KafkaRaftServer
logger.raft.level=INFO
logger.lifecycle.name=kafka.server.BrokerLifecycleManager
logger.lifecycle.level=INFO
`;

/**
 * SASL users of the SASL_PLAINTEXT and SASL_SSL listeners, for PLAIN and for SCRAM-SHA-256/512 alike
 * (`admin` is a super user, `mirror` has only its ACLs).
 */
export const SASL_USERS = { admin: "admin-secret", mirror: "mirror-secret" };

/** The password of every key and trust store `createTlsMaterial` writes (test material only). */
export const TLS_STORE_PASSWORD = "test-store-secret";

/**
 * Self-signed TLS material for the SSL listeners, made with the JDK's keytool (no openssl needed): the
 * brokers' key store (one EC key, SAN IP:127.0.0.1 and DNS:localhost) and its certificate as a PEM trust
 * store for clients; a client key store (CN=mirror, PKCS12) that the mTLS listener's trust store trusts;
 * and an unrelated certificate (`otherCa`) that trusts nothing of this broker.
 */
export async function createTlsMaterial(dir) {
  fs.mkdirSync(dir, { recursive: true });
  const file = (name) => path.join(dir, name);
  const pw = TLS_STORE_PASSWORD;
  await requireTool("keytool", ["-help"]);
  const keytool = (args) => run("keytool", args, { timeout: 120_000 });
  const genkey = (alias, dname, store, ext) =>
    keytool([
      "-genkeypair",
      "-alias",
      alias,
      "-keyalg",
      "EC",
      "-groupname",
      "secp256r1",
      "-validity",
      "30",
      "-dname",
      dname,
      ...(ext ? ["-ext", ext] : []),
      "-keystore",
      file(store),
      "-storetype",
      "PKCS12",
      "-storepass",
      pw,
      "-keypass",
      pw,
    ]);
  const exportPem = (alias, store, pem) =>
    keytool([
      "-exportcert",
      "-rfc",
      "-alias",
      alias,
      "-keystore",
      file(store),
      "-storepass",
      pw,
      "-file",
      file(pem),
    ]);
  await Promise.all([
    genkey("broker", "CN=localhost", "broker.p12", "SAN=IP:127.0.0.1,DNS:localhost"),
    genkey("mirror", "CN=mirror", "client.p12"),
    genkey("other", "CN=other", "other.p12", "SAN=IP:127.0.0.1,DNS:localhost"),
  ]);
  await Promise.all([
    exportPem("broker", "broker.p12", "ca.pem"),
    exportPem("mirror", "client.p12", "client-cert.pem"),
    exportPem("other", "other.p12", "other-ca.pem"),
  ]);
  await keytool([
    "-importcert",
    "-noprompt",
    "-alias",
    "mirror",
    "-file",
    file("client-cert.pem"),
    "-keystore",
    file("broker-truststore.p12"),
    "-storetype",
    "PKCS12",
    "-storepass",
    pw,
  ]);
  return {
    brokerKeystore: file("broker.p12"),
    brokerTruststore: file("broker-truststore.p12"),
    caPem: file("ca.pem"),
    clientKeystore: file("client.p12"),
    otherCaPem: file("other-ca.pem"),
    password: pw,
  };
}

// PLAINTEXT and SSL clients are User:ANONYMOUS, a super user, so tests that do not care about security never
// meet the authorizer; the SASL_PLAINTEXT listener authenticates and authorizes (StandardAuthorizer, KRaft).
// The MTLS listener requires a client certificate: its user is User:CN=mirror, a super user too. SASL_SSL
// authenticates the SASL/PLAIN users over TLS, as SASL_PLAINTEXT does in clear.
function serverProperties({
  dir,
  nodeId,
  voters,
  brokerPort,
  saslPort,
  sslPort,
  mtlsPort,
  saslSslPort,
  controllerPort,
  tls,
}) {
  const users = Object.entries(SASL_USERS)
    .map(([user, password]) => `user_${user}="${password}"`)
    .join(" ");
  return `process.roles=broker,controller
node.id=${nodeId}
controller.quorum.voters=${voters}
listeners=PLAINTEXT://127.0.0.1:${brokerPort},SASL_PLAINTEXT://127.0.0.1:${saslPort},SSL://127.0.0.1:${sslPort},MTLS://127.0.0.1:${mtlsPort},SASL_SSL://127.0.0.1:${saslSslPort},CONTROLLER://127.0.0.1:${controllerPort}
advertised.listeners=PLAINTEXT://127.0.0.1:${brokerPort},SASL_PLAINTEXT://127.0.0.1:${saslPort},SSL://127.0.0.1:${sslPort},MTLS://127.0.0.1:${mtlsPort},SASL_SSL://127.0.0.1:${saslSslPort}
listener.security.protocol.map=PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT,SSL:SSL,MTLS:SSL,SASL_SSL:SASL_SSL,CONTROLLER:PLAINTEXT
ssl.keystore.type=PKCS12
ssl.keystore.location=${tls.brokerKeystore}
ssl.keystore.password=${tls.password}
ssl.key.password=${tls.password}
listener.name.mtls.ssl.client.auth=required
listener.name.mtls.ssl.truststore.type=PKCS12
listener.name.mtls.ssl.truststore.location=${tls.brokerTruststore}
listener.name.mtls.ssl.truststore.password=${tls.password}
controller.listener.names=CONTROLLER
inter.broker.listener.name=PLAINTEXT
sasl.enabled.mechanisms=PLAIN,SCRAM-SHA-256,SCRAM-SHA-512
listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-256.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_ssl.scram-sha-512.sasl.jaas.config=org.apache.kafka.common.security.scram.ScramLoginModule required;
listener.name.sasl_plaintext.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${SASL_USERS.admin}" ${users};
listener.name.sasl_ssl.plain.sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="${SASL_USERS.admin}" ${users};
authorizer.class.name=org.apache.kafka.metadata.authorizer.StandardAuthorizer
super.users=User:ANONYMOUS;User:admin;User:CN=mirror
log.dirs=${path.join(dir, "data")}
num.partitions=1
default.replication.factor=1
min.insync.replicas=1
auto.create.topics.enable=false
offsets.topic.replication.factor=1
offsets.topic.num.partitions=1
transaction.state.log.replication.factor=1
transaction.state.log.min.isr=1
transaction.state.log.num.partitions=1
group.initial.rebalance.delay.ms=0
log.cleaner.backoff.ms=100
log.cleaner.dedupe.buffer.size=2097152
log.cleaner.min.cleanable.ratio=0.01
log.cleaner.delete.retention.ms=100
log.cleaner.min.compaction.lag.ms=0
log.segment.delete.delay.ms=0
transaction.abort.timed.out.transaction.cleanup.interval.ms=1000
`;
}

/**
 * Formats a fresh KRaft log dir and starts the broker; resolves once it logged "Kafka Server started".
 * The handle can stop it (SIGTERM, SIGKILL after 15 s) and start it again on the same ports and data.
 */
export async function startKafkaBroker({ log = () => {}, readyTimeoutMs = 120_000 } = {}) {
  const [node] = await startKafkaNodes({ log, readyTimeoutMs, count: 1 });
  return node;
}

/**
 * A KRaft cluster of `count` combined broker+controller nodes (node ids 1..count, all voters), each with
 * its own handle; resolves once every node is ready. With several nodes the quorum needs a majority up.
 */
export async function startKafkaCluster({ log = () => {}, readyTimeoutMs = 120_000, count = 3 } = {}) {
  const nodes = await startKafkaNodes({ log, readyTimeoutMs, count });
  return {
    nodes,
    bootstrap: nodes.map((n) => n.bootstrap).join(","),
    clusterId: nodes[0].clusterId,
    async destroy() {
      await Promise.all(nodes.map((n) => n.destroy()));
    },
  };
}

async function startKafkaNodes({ log, readyTimeoutMs, count }) {
  const { libs, downloadMs } = await ensureKafkaJars({ log });
  const ports = new Set();
  while (ports.size < 6 * count) ports.add(await freePort());
  const all = [...ports];
  const specs = Array.from({ length: count }, (_, i) => ({
    nodeId: i + 1,
    brokerPort: all[6 * i],
    saslPort: all[6 * i + 1],
    sslPort: all[6 * i + 2],
    mtlsPort: all[6 * i + 3],
    saslSslPort: all[6 * i + 4],
    controllerPort: all[6 * i + 5],
    dir: fs.mkdtempSync(path.join(os.tmpdir(), "cluster-mirror-kafka-")),
  }));
  // One set of TLS material for every node (each node's dir gets a copy, so destroying one keeps the others').
  const tls = await createTlsMaterial(path.join(specs[0].dir, "tls"));
  for (const spec of specs.slice(1))
    fs.cpSync(path.dirname(tls.caPem), path.join(spec.dir, "tls"), { recursive: true });
  const voters = specs.map((n) => `${n.nodeId}@127.0.0.1:${n.controllerPort}`).join(",");
  const clusterId = randomClusterId();
  const nodes = await Promise.all(
    specs.map((spec) =>
      createNode({
        ...spec,
        voters,
        clusterId,
        libs,
        downloadMs,
        log,
        readyTimeoutMs,
        tls: Object.fromEntries(
          Object.entries(tls).map(([k, v]) => [
            k,
            k === "password" ? v : path.join(spec.dir, "tls", path.basename(v)),
          ]),
        ),
      }),
    ),
  );
  try {
    await Promise.all(nodes.map((n) => n.start()));
  } catch (error) {
    await Promise.all(nodes.map((n) => n.destroy()));
    throw error;
  }
  return nodes;
}

/** Writes one node's configs, formats its log dir, and returns its (stopped) handle. */
async function createNode(node) {
  const {
    nodeId,
    brokerPort,
    saslPort,
    sslPort,
    mtlsPort,
    saslSslPort,
    dir,
    tls,
    clusterId,
    libs,
    downloadMs,
    log,
    readyTimeoutMs,
  } = node;
  const props = path.join(dir, "server.properties");
  // serverProperties takes what it needs of the node's settings (ports, dir, voters, TLS material).
  fs.writeFileSync(props, serverProperties(node));
  const logConfig = path.join(dir, KAFKA_4 ? "log4j2.properties" : "log4j.properties");
  fs.writeFileSync(logConfig, KAFKA_4 ? LOG4J2 : LOG4J);
  const classpath = `${libs}${path.sep}*`;
  const log4j = KAFKA_4
    ? `-Dlog4j2.configurationFile=${logConfig}`
    : `-Dlog4j.configuration=file:${logConfig}`;
  await run(
    "java",
    [
      "-Xmx256m",
      log4j,
      "-cp",
      classpath,
      "kafka.tools.StorageTool",
      "format",
      "-t",
      clusterId,
      "-c",
      props,
      // SCRAM credentials live in the KRaft metadata: added when the log dir is formatted.
      ...Object.entries(SASL_USERS).flatMap(([user, password]) =>
        ["SCRAM-SHA-256", "SCRAM-SHA-512"].flatMap((mechanism) => [
          "--add-scram",
          `${mechanism}=[name=${user},password=${password}]`,
        ]),
      ),
    ],
    { timeout: 120_000 },
  );
  const handle = {
    bootstrap: `127.0.0.1:${brokerPort}`,
    saslBootstrap: `127.0.0.1:${saslPort}`,
    sslBootstrap: `127.0.0.1:${sslPort}`,
    mtlsBootstrap: `127.0.0.1:${mtlsPort}`,
    saslSslBootstrap: `127.0.0.1:${saslSslPort}`,
    tls,
    clusterId,
    nodeId,
    dir,
    libs,
    downloadMs,
    startMs: 0,
    /** The running JVM, or undefined while stopped. */
    process: undefined,
    output: "",
    async start() {
      if (handle.process) return;
      const started = performance.now();
      const child = spawn(
        "java",
        [
          "-Xms128m",
          "-Xmx512m",
          "-XX:+UseG1GC",
          "-XX:+ExitOnOutOfMemoryError",
          "-Djava.awt.headless=true",
          log4j,
          `-Dkafka.logs.dir=${path.join(dir, "logs")}`,
          "-cp",
          classpath,
          "kafka.Kafka",
          props,
        ],
        { stdio: ["ignore", "pipe", "pipe"] },
      );
      handle.process = child;
      // However this process ends (a test run killed by Ctrl-C, a crash), the JVM does not outlive it.
      const killOnExit = () => child.kill("SIGKILL");
      process.once("exit", killOnExit);
      child.once("exit", () => process.removeListener("exit", killOnExit));
      await new Promise((resolve, reject) => {
        let seen = "";
        const timer = setTimeout(() => {
          reject(
            new Error(
              `the Kafka broker was not ready after ${readyTimeoutMs} ms; its output:\n${seen.slice(-4000)}`,
            ),
          );
        }, readyTimeoutMs);
        const onData = (chunk) => {
          seen += chunk;
          handle.output = (handle.output + chunk).slice(-20_000);
          if (seen.includes(READY)) {
            clearTimeout(timer);
            resolve();
          }
        };
        child.stdout.setEncoding("utf8").on("data", onData);
        child.stderr.setEncoding("utf8").on("data", onData);
        child.once("exit", (code, signal) => {
          clearTimeout(timer);
          if (handle.process === child) handle.process = undefined;
          reject(
            new Error(
              `the Kafka broker exited (${signal ?? code}) before it was ready; its output:\n${seen.slice(-4000)}`,
            ),
          );
        });
      }).catch(async (error) => {
        await handle.stop();
        throw error;
      });
      handle.startMs = Math.round(performance.now() - started);
      log(
        `Kafka broker ${nodeId} ready at ${handle.bootstrap} in ${(handle.startMs / 1000).toFixed(1)} s (pid ${child.pid})`,
      );
    },
    /** Stops the JVM (SIGTERM, a clean shutdown; SIGKILL after 15 s). */
    async stop() {
      const child = handle.process;
      if (!child) return;
      handle.process = undefined;
      if (child.exitCode !== null || child.signalCode !== null) return;
      await new Promise((resolve) => {
        const kill = setTimeout(() => child.kill("SIGKILL"), 15_000);
        child.once("exit", () => {
          clearTimeout(kill);
          resolve();
        });
        child.kill("SIGTERM");
      });
    },
    /**
     * Kills the JVM (SIGKILL): a crash, without the controlled shutdown that has the controller fence the
     * broker at once; resolves once it exited. `start()` starts it again on the same ports and data.
     */
    async kill() {
      const child = handle.process;
      if (!child) return;
      handle.process = undefined;
      if (child.exitCode !== null || child.signalCode !== null) return;
      const exited = new Promise((resolve) => child.once("exit", resolve));
      child.kill("SIGKILL");
      await exited;
    },
    /** Stops the broker and deletes its data. */
    async destroy() {
      await handle.stop();
      fs.rmSync(dir, { recursive: true, force: true });
    },
  };
  return handle;
}

if (process.argv[1] && fs.realpathSync(process.argv[1]) === fileURLToPath(import.meta.url)) {
  const broker = await startKafkaBroker({ log: (m) => console.error(m) });
  // stdout: the PLAINTEXT address alone (for scripts); stderr: the rest a user needs.
  console.log(broker.bootstrap);
  const users = Object.entries(SASL_USERS)
    .map(([user, password]) => `${user}/${password}`)
    .join(", ");
  console.error(
    [
      `PLAINTEXT       ${broker.bootstrap}   (bootstrap.servers of a mirror)`,
      `SASL_PLAINTEXT  ${broker.saslBootstrap}   (PLAIN and SCRAM-SHA-256/512 users: ${users})`,
      `SSL             ${broker.sslBootstrap}   (ssl.truststore.type=PEM, ssl.truststore.location=${broker.tls.caPem})`,
      `SSL, client TLS ${broker.mtlsBootstrap}`,
      `SASL_SSL        ${broker.saslSslBootstrap}`,
      `data in ${broker.dir}: deleted when this stops (Ctrl-C)`,
    ].join("\n"),
  );
  const shutdown = () => {
    broker.destroy().then(() => process.exit(0));
  };
  process.on("SIGINT", shutdown);
  process.on("SIGTERM", shutdown);
}
