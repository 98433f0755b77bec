import * as path from "node:path";
import type { TestProject } from "vitest/node";
import { KAFKA_VERSION, startKafkaBroker, type TlsMaterial } from "../../scripts/kafka-broker.mjs";

declare module "vitest" {
  export interface ProvidedContext {
    /** `127.0.0.1:<port>` of the run's Apache Kafka broker (3.9.1, or `KAFKA_VERSION`). */
    kafkaBootstrap: string;
    /** The Apache Kafka version of the broker (3.9.1, or `KAFKA_VERSION`). */
    kafkaVersion: string;
    /** The broker's jar folder, for Java tools and programs (`java -cp <libs>/*`). */
    kafkaLibs: string;
    kafkaClusterId: string;
    /** `127.0.0.1:<port>` of the broker's SASL_PLAINTEXT listener (SASL/PLAIN, authorizer on). */
    kafkaSaslBootstrap: string;
    /** `127.0.0.1:<port>` of the broker's SSL listener (its certificate in `kafkaTls.caPem`). */
    kafkaSslBootstrap: string;
    /** `127.0.0.1:<port>` of the broker's MTLS listener (SSL; a client certificate is required). */
    kafkaMtlsBootstrap: string;
    /** `127.0.0.1:<port>` of the broker's SASL_SSL listener (SASL/PLAIN over TLS). */
    kafkaSaslSslBootstrap: string;
    /** The self-signed TLS material of the SSL listeners (file paths and the stores' password). */
    kafkaTls: TlsMaterial;
    /** The broker's `log.dirs`: `<topic>-<partition>/<base offset>.log` segments, as Kafka stored them. */
    kafkaDataDir: string;
  }
}

/**
 * Starts one real Kafka broker for the run's real-broker test files (downloading its jars with mvn on the
 * first run), and stops it afterwards, also when tests failed. Without java or mvn it throws, so those
 * tests fail with a message saying what to install.
 */
export default async function setup(project: TestProject): Promise<() => Promise<void>> {
  const log = (message: string) => process.stderr.write(`[kafka-broker] ${message}\n`);
  const broker = await startKafkaBroker({ log });
  project.provide("kafkaBootstrap", broker.bootstrap);
  project.provide("kafkaLibs", broker.libs);
  project.provide("kafkaVersion", KAFKA_VERSION);
  project.provide("kafkaClusterId", broker.clusterId);
  project.provide("kafkaSaslBootstrap", broker.saslBootstrap);
  project.provide("kafkaSslBootstrap", broker.sslBootstrap);
  project.provide("kafkaMtlsBootstrap", broker.mtlsBootstrap);
  project.provide("kafkaSaslSslBootstrap", broker.saslSslBootstrap);
  project.provide("kafkaTls", broker.tls);
  project.provide("kafkaDataDir", path.join(broker.dir, "data"));
  return async () => {
    await broker.destroy();
    log("Kafka broker stopped");
  };
}
