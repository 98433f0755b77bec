/** The cluster uses the log's clock: one `Clock` for the whole project. */
export { type Clock, ManualClock } from "@cluster-mirror/log";
