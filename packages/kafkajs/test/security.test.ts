import { generateKeyPairSync } from "node:crypto";
import * as fs from "node:fs";
import * as path from "node:path";
import { describe, expect, it } from "vitest";
import { kafkajsSecurity, parseBootstrap, UnsupportedSourceSecurityError } from "../src/index";

// Test-only TLS material (fixtures/tls/README.md): a self-signed client certificate, its key, its PKCS12 store.
const fixture = (name: string) => fs.readFileSync(path.join(import.meta.dirname, "fixtures", "tls", name));
const certPem = fixture("client-cert.pem").toString("utf8");
const keyPem = fixture("client-key.pem").toString("utf8");
const otherKeyPem = generateKeyPairSync("ec", { namedCurve: "P-256" })
  .privateKey.export({ type: "pkcs8", format: "pem" })
  .toString();
const files: Record<string, Buffer> = {
  "/ca.pem": Buffer.from(certPem),
  "/client.pem": Buffer.from(keyPem + certPem),
  "/client.p12": fixture("client.p12"),
  "/garbage.pem": Buffer.from("not a certificate"),
  "/broken.pem": Buffer.from("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"),
  "/mismatched.pem": Buffer.from(otherKeyPem + certPem),
};
const readFile = (p: string) => {
  const f = files[p];
  if (f === undefined) throw new Error(`ENOENT: ${p}`);
  return f;
};

describe("mirror security configs to kafkajs connection options", () => {
  it("PLAINTEXT (the default) needs neither TLS nor SASL", () => {
    expect(kafkajsSecurity("m", {}, readFile)).toEqual({});
  });

  it("SASL_SSL with SCRAM passes the JAAS credentials and the PEM trust store", () => {
    const security = kafkajsSecurity(
      "m",
      {
        "security.protocol": "SASL_SSL",
        "sasl.mechanism": "SCRAM-SHA-512",
        "sasl.jaas.config":
          'org.apache.kafka.common.security.scram.ScramLoginModule required username="mirror" password="s3\\"cret";',
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/ca.pem",
        "ssl.keystore.type": "PEM",
        "ssl.keystore.location": "/client.pem",
        "ssl.endpoint.identification.algorithm": "",
      },
      readFile,
    );
    expect(security.sasl).toEqual({ mechanism: "scram-sha-512", username: "mirror", password: 's3"cret' });
    expect(security.ssl).toMatchObject({ ca: certPem, key: keyPem + certPem, cert: keyPem + certPem });
    expect(typeof (security.ssl as Record<string, unknown>).checkServerIdentity).toBe("function");
  });

  it("a PKCS12 key store is handed to Node whole (pfx) with the store's password", () => {
    const security = kafkajsSecurity(
      "m",
      {
        "security.protocol": "SSL",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/ca.pem",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": "/client.p12",
        "ssl.keystore.password": "test-secret",
      },
      readFile,
    );
    expect(security.ssl).toEqual({
      ca: certPem,
      pfx: files["/client.p12"],
      passphrase: "test-secret",
    });
  });

  it("SSL without stores uses the system's trusted CAs", () => {
    expect(kafkajsSecurity("m", { "security.protocol": "ssl" }, readFile)).toEqual({ ssl: true });
  });

  it.each([
    [{ "security.protocol": "SASL" }, "security.protocol"],
    [{ "security.protocol": "SASL_PLAINTEXT" }, "sasl.mechanism"],
    [{ "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "OAUTHBEARER" }, "sasl.mechanism"],
    [{ "security.protocol": "SASL_PLAINTEXT", "sasl.mechanism": "PLAIN" }, "sasl.jaas.config"],
    [
      {
        "security.protocol": "SASL_PLAINTEXT",
        "sasl.mechanism": "PLAIN",
        "sasl.jaas.config": "Krb5LoginModule required;",
      },
      "sasl.jaas.config",
    ],
    [{ "security.protocol": "SSL", "ssl.truststore.location": "/ca.jks" }, "ssl.truststore.type"],
    // A Java client's usual trust store settings: the store type is what is refused, not the password.
    [
      {
        "security.protocol": "SSL",
        "ssl.truststore.location": "/ca.jks",
        "ssl.truststore.password": "changeit",
      },
      "ssl.truststore.type",
    ],
    [
      {
        "security.protocol": "SSL",
        "ssl.truststore.type": "PEM",
        "ssl.truststore.location": "/ca.pem",
        "ssl.truststore.password": "changeit",
      },
      "ssl.truststore.password",
    ],
    [
      { "security.protocol": "SSL", "ssl.truststore.type": "PKCS12", "ssl.truststore.location": "/ca.p12" },
      "ssl.truststore.type",
    ],
    [{ "security.protocol": "SSL", "ssl.keystore.location": "/client.jks" }, "ssl.keystore.type"],
    [
      { "security.protocol": "SSL", "ssl.keystore.type": "PKCS12", "ssl.keystore.location": "/missing.p12" },
      "ssl.keystore.location",
    ],
    [
      {
        "security.protocol": "SSL",
        "ssl.keystore.type": "PKCS12",
        "ssl.keystore.location": "/client.p12",
        "ssl.keystore.password": "wrong",
      },
      "ssl.keystore.password",
    ],
    [
      { "security.protocol": "SSL", "ssl.keystore.type": "PKCS12", "ssl.keystore.location": "/ca.pem" },
      "ssl.keystore.location",
    ],
    [
      { "security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": "/garbage.pem" },
      "ssl.truststore.location",
    ],
    [
      { "security.protocol": "SSL", "ssl.truststore.certificates": files["/broken.pem"]!.toString() },
      "ssl.truststore.certificates",
    ],
    [
      { "security.protocol": "SSL", "ssl.keystore.type": "PEM", "ssl.keystore.location": "/mismatched.pem" },
      "ssl.keystore.location",
    ],
    [
      {
        "security.protocol": "SSL",
        "ssl.keystore.key": "not a key",
        "ssl.keystore.certificate.chain": certPem,
      },
      "ssl.keystore.key",
    ],
    [
      { "security.protocol": "SSL", "ssl.truststore.type": "PEM", "ssl.truststore.location": "/missing.pem" },
      "ssl.truststore.location",
    ],
  ])("refuses %o with a typed INVALID_CONFIG naming %s", (configs, key) => {
    let caught: unknown;
    try {
      kafkajsSecurity("m", configs, readFile);
    } catch (error) {
      caught = error;
    }
    expect(caught).toBeInstanceOf(UnsupportedSourceSecurityError);
    expect(caught).toMatchObject({ errorName: "INVALID_CONFIG", code: 40, retriable: false, config: key });
    expect((caught as Error).message).toContain(key);
  });
});

describe("a PEM trust store given without its type", () => {
  it("says that the type defaults to JKS and to set ssl.truststore.type=PEM", () => {
    const attempt = () =>
      kafkajsSecurity("m", { "security.protocol": "SSL", "ssl.truststore.location": "/ca.pem" }, readFile);
    expect(attempt).toThrow(UnsupportedSourceSecurityError);
    // Before: "JKS stores are not supported ... export the trusted certificates as PEM" for a file that is PEM.
    expect(attempt).toThrow(
      /ssl\.truststore\.type is not set, so it is Kafka's default \(JKS\), but \/ca\.pem is a PEM file: set ssl\.truststore\.type=PEM/,
    );
  });
});

describe("bootstrap.servers", () => {
  it("parses host:port lists, IPv6 in brackets included", () => {
    expect(parseBootstrap("m", " a:9092, [::1]:9093 ")).toEqual([
      { host: "a", port: 9092 },
      { host: "::1", port: 9093 },
    ]);
  });

  it.each(["", "a", "a:0", ":9092", "a:99999"])("refuses '%s' with INVALID_CONFIG", (value) => {
    expect(() => parseBootstrap("m", value)).toThrow(
      expect.objectContaining({ errorName: "INVALID_CONFIG" }),
    );
  });
});
