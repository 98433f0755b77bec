import {
  activePassive,
  chain,
  failover,
  fanIn,
  fanOut,
  produce,
  Simulation,
  settleAndCheck,
  type TopologySpec,
} from "@cluster-mirror/sim";
import { type BenchResult, type BenchSuite, result, timeOnceMsAsync } from "../harness";

/** One simulated scenario: build, produce, fail over, settle and check every invariant. */
async function scenario(spec: TopologySpec, seed: number): Promise<void> {
  const sim = await Simulation.create(spec, seed);
  for (let i = 0; i < 4; i++) await produce(sim, i, i, 2);
  await failover(sim, 0);
  await settleAndCheck(sim);
  if (sim.violations.length > 0)
    throw new Error(`sim bench ${spec.name} seed ${seed}: ${sim.violations[0]?.message}`);
}

/** Scenarios per second over `runs` seeds. */
async function scenariosPerSecond(spec: () => TopologySpec, runs: number): Promise<number> {
  const ms = await timeOnceMsAsync(async () => {
    for (let seed = 1; seed <= runs; seed++) await scenario(spec(), seed);
  });
  return (runs * 1000) / ms;
}

/**
 * Simulated scenarios per second per topology, beside active-passive measured in the same run (the
 * baseline: the simplest topology doing the same work).
 */
export const suite: BenchSuite = {
  name: "sim",
  async run(): Promise<BenchResult[]> {
    const runs = 5;
    const baseline = await scenariosPerSecond(activePassive, runs);
    const out: BenchResult[] = [
      result("sim.active-passive", baseline, "scenarios/s", baseline, "baseline: itself"),
    ];
    const others: [string, () => TopologySpec][] = [
      ["sim.fan-out", fanOut],
      ["sim.fan-in", fanIn],
      ["sim.chain-3", () => chain(3)],
      ["sim.chain-5", () => chain(5)],
    ];
    for (const [name, spec] of others) {
      out.push(
        result(
          name,
          await scenariosPerSecond(spec, runs),
          "scenarios/s",
          baseline,
          "baseline: active-passive",
        ),
      );
    }
    return out;
  },
};
