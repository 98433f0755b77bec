import { X509Certificate } from "node:crypto";
import * as fs from "node:fs";
import * as tls from "node:tls";
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
 * `sasl.jaas.config`, `ssl.*` with PEM stores, or a PKCS12 key store) into kafkajs's `ssl` and `sasl`
 * connection options. What kafkajs cannot do (JKS stores, a PKCS12 trust store, GSSAPI, OAUTHBEARER
 * without a token provider) is refused with UnsupportedSourceSecurityError naming the key and the
 * supported alternative.
 */
export function kafkajsSecurity(
  mirrorName: string,
  configs: Readonly<Record<string, string>>,
  readFile: (path: string) => Buffer = (p) => fs.readFileSync(p),
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
  readFile: (path: string) => Buffer,
  fail: (key: string, message: string) => Error,
): true | Record<string, unknown> {
  const options: Record<string, unknown> = {};
  const read = (key: string): Buffer => {
    const path = configs[key]!;
    try {
      return readFile(path);
    } catch (error) {
      throw fail(key, `cannot read '${path}': ${error instanceof Error ? error.message : String(error)}`);
    }
  };
  // Kafka's default store type is JKS, which Node cannot read.
  const storeType = (typeKey: string, locationKey: string, supported: readonly string[], hint: string) => {
    const type = (configs[typeKey] ?? (configs[locationKey] ? "JKS" : "PEM")).trim().toUpperCase();
    if (configs[locationKey] && !supported.includes(type)) {
      // A PEM file with no type given: Kafka's default type (JKS) applies, which is surely not meant.
      if (
        configs[typeKey] === undefined &&
        supported.includes("PEM") &&
        looksLikePem(readFile, configs[locationKey])
      )
        throw fail(
          typeKey,
          `${typeKey} is not set, so it is Kafka's default (JKS), but ${configs[locationKey]} is a PEM file: set ${typeKey}=PEM`,
        );
      throw fail(
        typeKey,
        `${type} stores are not supported by the kafkajs source (supported: ${supported.join(", ")}); ${hint}`,
      );
    }
    return type;
  };
  storeType(
    "ssl.truststore.type",
    "ssl.truststore.location",
    ["PEM"],
    "export the trusted certificates as PEM (keytool -exportcert -rfc) and set ssl.truststore.type=PEM",
  );
  // Only a JKS or PKCS12 trust store has a password, and those are refused above.
  if (configs["ssl.truststore.password"] !== undefined)
    throw fail(
      "ssl.truststore.password",
      "a PEM trust store has no password (Kafka refuses one for PEM too); remove ssl.truststore.password",
    );
  const keystore = storeType(
    "ssl.keystore.type",
    "ssl.keystore.location",
    ["PEM", "PKCS12"],
    "convert the store (keytool -importkeystore -deststoretype PKCS12) and set ssl.keystore.type=PKCS12",
  );
  if (configs["ssl.truststore.certificates"]) options.ca = configs["ssl.truststore.certificates"];
  else if (configs["ssl.truststore.location"]) options.ca = read("ssl.truststore.location").toString("utf8");
  if (configs["ssl.keystore.certificate.chain"]) options.cert = configs["ssl.keystore.certificate.chain"];
  if (configs["ssl.keystore.key"]) options.key = configs["ssl.keystore.key"];
  if (configs["ssl.key.password"]) options.passphrase = configs["ssl.key.password"];
  if (configs["ssl.keystore.location"] && keystore === "PKCS12") {
    // Node reads a PKCS12 key store itself (its key, certificate and chain), under the store's password.
    options.pfx = read("ssl.keystore.location");
    const password = configs["ssl.keystore.password"] ?? configs["ssl.key.password"];
    if (password !== undefined) options.passphrase = password;
  } else if (configs["ssl.keystore.location"]) {
    // A PEM key store holds the private key and the certificate chain in one file.
    const pem = read("ssl.keystore.location").toString("utf8");
    options.key = pem;
    options.cert = pem;
  }
  const identification = configs["ssl.endpoint.identification.algorithm"];
  if (identification !== undefined && identification.trim() === "")
    options.checkServerIdentity = () => undefined;
  checkTrustStore(options, configs, fail);
  checkKeyStore(options, configs, fail);
  return Object.keys(options).length === 0 ? true : options;
}

const messageOf = (error: unknown) => (error instanceof Error ? error.message : String(error));

/**
 * A trust store Node would silently ignore (no certificate in it, or one it cannot parse) is refused now,
 * naming the key, rather than failing every connection later with "self-signed certificate".
 */
function checkTrustStore(
  options: Record<string, unknown>,
  configs: Readonly<Record<string, string>>,
  fail: (key: string, message: string) => Error,
): void {
  if (options.ca === undefined) return;
  const key = configs["ssl.truststore.certificates"]
    ? "ssl.truststore.certificates"
    : "ssl.truststore.location";
  const blocks =
    String(options.ca).match(/-----BEGIN CERTIFICATE-----[\s\S]+?-----END CERTIFICATE-----/g) ?? [];
  if (blocks.length === 0)
    throw fail(key, "holds no PEM certificate (-----BEGIN CERTIFICATE----- ... -----END CERTIFICATE-----)");
  for (const [i, block] of blocks.entries()) {
    try {
      new X509Certificate(block);
    } catch (error) {
      throw fail(key, `certificate ${i + 1} of ${blocks.length} cannot be read: ${messageOf(error)}`);
    }
  }
}

/**
 * Loads the client's key and certificate once as Node will (a wrong PKCS12 password, a key that does not
 * parse or does not match its certificate), so a mistake is an INVALID_CONFIG naming the key at fault.
 */
function checkKeyStore(
  options: Record<string, unknown>,
  configs: Readonly<Record<string, string>>,
  fail: (key: string, message: string) => Error,
): void {
  const { pfx, key, cert, passphrase } = options as Pick<
    tls.SecureContextOptions,
    "pfx" | "key" | "cert" | "passphrase"
  >;
  if (pfx === undefined && key === undefined && cert === undefined) return;
  if (pfx === undefined && configs["ssl.keystore.location"]) {
    const pem = String(key);
    if (!/-----BEGIN [A-Z ]*PRIVATE KEY-----/.test(pem) || !/-----BEGIN CERTIFICATE-----/.test(pem))
      throw fail(
        "ssl.keystore.location",
        "a PEM key store holds the private key (-----BEGIN PRIVATE KEY-----) and the certificate chain (-----BEGIN CERTIFICATE-----) in one file; one of them is missing",
      );
  }
  try {
    tls.createSecureContext({ pfx, key, cert, passphrase });
  } catch (error) {
    const message = messageOf(error);
    const at =
      pfx !== undefined
        ? /mac verify/i.test(message)
          ? "ssl.keystore.password"
          : "ssl.keystore.location"
        : /bad decrypt|bad password/i.test(message)
          ? "ssl.key.password"
          : configs["ssl.keystore.location"]
            ? "ssl.keystore.location"
            : key === undefined
              ? "ssl.keystore.key"
              : cert === undefined
                ? "ssl.keystore.certificate.chain"
                : "ssl.keystore.key";
    const hint =
      at === "ssl.keystore.password" || at === "ssl.key.password"
        ? " (is the password right?)"
        : pfx !== undefined
          ? " (is it a PKCS12 file? JKS stores need keytool -importkeystore -deststoretype PKCS12)"
          : "";
    throw fail(at, `Node cannot load the client's key and certificate: ${message}${hint}`);
  }
}

/** True when the file at `path` starts (after white space) with a PEM armour line; false when unreadable. */
function looksLikePem(readFile: (path: string) => Buffer, path: string): boolean {
  try {
    return readFile(path).subarray(0, 256).toString("latin1").trimStart().startsWith("-----BEGIN ");
  } catch {
    return false;
  }
}
