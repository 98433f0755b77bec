import { ClusterError, Controller, SeededRandom } from "../src/index";

/** A controller with `brokers` registered brokers (seeded). */
export function controller(brokers = 3): Controller {
  const c = new Controller({ random: new SeededRandom(7) });
  for (let b = 0; b < brokers; b++) c.registerBroker(b);
  return c;
}

/** The ClusterError `fn` throws (fails the test if it throws nothing or something else). */
export function errorOf(fn: () => unknown): ClusterError {
  try {
    fn();
  } catch (e) {
    if (e instanceof ClusterError) return e;
    throw e;
  }
  throw new Error("expected a ClusterError");
}
