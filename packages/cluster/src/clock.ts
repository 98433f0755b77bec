/** The cluster uses the log's clock: one `Clock` for the whole project. */
export { type Clock, ManualClock } from "@cluster-mirror/log";

/**
 * Wall-clock time for embedded use in real time. This is the one place that reads the system clock; every
 * component receives a `Clock`, and tests and the simulator pass a `ManualClock` instead.
 */
export class SystemClock {
  now(): number {
    return Date.now();
  }
}
