import * as fs from "node:fs";
import { KafkaError } from "@cluster-mirror/protocol";
import type { KjsConnectionSecurity } from "./kafkajs-internals";

/** A mirror's security setting that kafkajs cannot honour, or that is malformed (Kafka's INVALID_CONFIG, 40). */
export class UnsupportedSourceSecurityError extends KafkaError {
  /** The config key at fault. */
  readonly config: string;

  constructor(mirrorName: string, config: string, message: string) {
    super("INVALID_CONFIG", 40, false, `mirror '${mirrorName}': ${config}: ${message}`);
    this.config = config;
  }
}

const PROTOCOLS = new Set(["PLAINTEXT", "SSL", "SASL_PLAINTEXT", "SASL_SSL"]);
const MECHANISMS: Record<string, string> = {
  PLAIN: "plain",
  "SCRAM-SHA-256": "scram-sha-256",
  "SCRAM-SHA-512": "scram-sha-512",
};

/**
 * Translates the Kafka client settings of a mirror definition (`security.protocol`, `sasl.mechanism`,
 * `sasl.jaas.config`, `ssl.*` with PEM stores) into kafkajs's `ssl` and `sasl` connection options. What
 * kafkajs cannot do (JKS/PKCS12 stores, GSSAPI, OAUTHBEARER without a token provider) is refused with
 * UnsupportedSourceSecurityError naming the key and the supported alternative.
 */
export function kafkajsSecurity(
  mirrorName: string,
  configs: Readonly<Record<string, string>>,
  readFile: (path: string) => string = (p) => fs.readFileSync(p, "utf8"),
): KjsConnectionSecurity {
  const fail = (key: string, message: string) => new UnsupportedSourceSecurityError(mirrorName, key, message);
  const protocol = (configs["security.protocol"] ?? "PLAINTEXT").trim().toUpperCase();
  if (!PROTOCOLS.has(protocol))
    throw fail("security.protocol", `'${protocol}' is not one of PLAINTEXT, SSL, SASL_PLAINTEXT, SASL_SSL`);
  const out: KjsConnectionSecurity = {};
  if (protocol === "SSL" || protocol === "SASL_SSL") out.ssl = tlsOptions(configs, readFile, fail);
  if (protocol === "SASL_PLAINTEXT" || protocol === "SASL_SSL") {
    const mechanism = (configs["sasl.mechanism"] ?? "GSSAPI").trim().toUpperCase();
    const kjs = MECHANISMS[mechanism];
    if (!kjs)
      throw fail(
        "sasl.mechanism",
        `'${mechanism}' is not supported by the kafkajs source (supported: ${Object.keys(MECHANISMS).join(", ")}); Kafka's default is GSSAPI, so set sasl.mechanism explicitly`,
      );
    const jaas = configs["sasl.jaas.config"];
    if (!jaas) throw fail("sasl.jaas.config", `is required with sasl.mechanism=${mechanism}`);
    const { username, password } = parseJaas(jaas, fail);
    out.sasl = { mechanism: kjs, username, password };
  }
  return out;
}

/** username and password of a PlainLoginModule or ScramLoginModule JAAS line. */
function parseJaas(
  jaas: string,
  fail: (key: string, message: string) => Error,
): { username: string; password: string } {
  if (!/\b(PlainLoginModule|ScramLoginModule)\b/.test(jaas))
    throw fail(
      "sasl.jaas.config",
      "only PlainLoginModule and ScramLoginModule are supported by the kafkajs source",
    );
  const option = (name: string) => {
    const m = new RegExp(`\\b${name}\\s*=\\s*"((?:[^"\\\\]|\\\\.)*)"`).exec(jaas);
    return m ? m[1]!.replace(/\\(.)/g, "$1") : undefined;
  };
  const username = option("username");
  const password = option("password");
  if (username === undefined || password === undefined)
    throw fail("sasl.jaas.config", 'needs username="..." and password="..." options');
  return { username, password };
}

function tlsOptions(
  configs: Readonly<Record<string, string>>,
  readFile: (path: string) => string,
  fail: (key: string, message: string) => Error,
): true | Record<string, unknown> {
  const options: Record<string, unknown> = {};
  const read = (key: string) => {
    const path = configs[key]!;
    try {
      return readFile(path);
    } catch (error) {
      throw fail(key, `cannot read '${path}': ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  const pemOnly = (typeKey: string, locationKey: string) => {
    const type = (configs[typeKey] ?? (configs[locationKey] ? "JKS" : "PEM")).toUpperCase();
    if (configs[locationKey] && type !== "PEM")
      throw fail(
        typeKey,
        `${type} stores are not supported by the kafkajs source; convert the store to PEM (e.g. keytool -exportcert -rfc / openssl pkcs12 -nodes) and set ${typeKey}=PEM`,
      );
  };
  pemOnly("ssl.truststore.type", "ssl.truststore.location");
  pemOnly("ssl.keystore.type", "ssl.keystore.location");
  if (configs["ssl.truststore.certificates"]) options.ca = configs["ssl.truststore.certificates"];
  else if (configs["ssl.truststore.location"]) options.ca = read("ssl.truststore.location");
  if (configs["ssl.keystore.certificate.chain"]) options.cert = configs["ssl.keystore.certificate.chain"];
  if (configs["ssl.keystore.key"]) options.key = configs["ssl.keystore.key"];
  if (configs["ssl.keystore.location"]) {
    // A PEM key store holds the private key and the certificate chain in one file.
    const pem = read("ssl.keystore.location");
    options.key = pem;
    options.cert = pem;
  }
  if (configs["ssl.key.password"]) options.passphrase = configs["ssl.key.password"];
  const identification = configs["ssl.endpoint.identification.algorithm"];
  if (identification !== undefined && identification.trim() === "")
    options.checkServerIdentity = () => undefined;
  return Object.keys(options).length === 0 ? true : options;
}
