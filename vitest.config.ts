import { defineConfig } from "vitest/config";

/** Test files that need a real Apache Kafka broker: their project starts one (once per run) for them. */
const REAL_BROKER_TESTS = "packages/kafkajs/test/broker/**/*.test.ts";
/** Test files that drive the visualizer in a real Chromium: their project builds the page (once per run). */
const BROWSER_TESTS = "packages/visualizer/test/browser/**/*.test.ts";

export default defineConfig({
  test: {
    testTimeout: 60_000,
    hookTimeout: 60_000,
    pool: "forks",
    reporters: ["default", "./test/plain-summary-reporter.ts"],
    projects: [
      {
        extends: true,
        test: {
          name: "unit",
          include: ["packages/*/test/**/*.test.ts", "machines/test/**/*.test.ts", "test/**/*.test.ts"],
          exclude: ["**/node_modules/**", REAL_BROKER_TESTS, BROWSER_TESTS],
        },
      },
      {
        // vitest runs a project's globalSetup only when the run includes one of its files, so runs of other
        // tests never start the JVM. The first run on a machine also downloads the broker's jars (mvn).
        extends: true,
        test: {
          name: "kafka-broker",
          include: [REAL_BROKER_TESTS],
          globalSetup: ["packages/kafkajs/test/broker/global-setup.ts"],
          testTimeout: 180_000,
          hookTimeout: 180_000,
        },
      },
      {
        extends: true,
        test: {
          name: "browser",
          include: [BROWSER_TESTS],
          globalSetup: ["packages/visualizer/test/browser/global-setup.ts"],
        },
      },
    ],
  },
});
