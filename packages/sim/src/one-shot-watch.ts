import type { Simulation } from "./simulation";

/**
 * A watch over several subscriptions that acts at most once: `disarm()` (at its match) ends it, and so does
 * the first event after `armedMs` of virtual time. The subscriptions are stopped from the scheduler, never
 * from inside the callback that disarmed it (a coordinator's commit, a controller's publish).
 */
export class OneShotWatch {
  private readonly until: number;
  private on = true;
  private readonly stops: (() => void)[] = [];

  constructor(
    private readonly sim: Simulation,
    armedMs: number,
  ) {
    this.until = sim.world.clock.now() + armedMs;
  }

  /** Adds a subscription's stop function. */
  add(stop: () => void): void {
    this.stops.push(stop);
  }

  /** True while it may still act; false (and disarmed) once it acted or `armedMs` passed. */
  get armed(): boolean {
    if (!this.on) return false;
    if (this.sim.world.clock.now() <= this.until) return true;
    this.disarm();
    return false;
  }

  disarm(): void {
    if (!this.on) return;
    this.on = false;
    this.sim.world.scheduler.schedule(() => {
      for (const stop of this.stops) stop();
    }, 0);
  }
}
