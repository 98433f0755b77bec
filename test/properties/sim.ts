/** The simulation package, re-exported for the property files. */
export * from "@cluster-mirror/sim";
