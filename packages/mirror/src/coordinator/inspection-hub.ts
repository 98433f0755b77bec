import type { AnyActorRef, InspectionEvent, Observer, Subscription } from "xstate";

/** An observer of XState's inspection events: every actor, event and snapshot of the coordinators. */
export type MirrorInspector = (event: InspectionEvent) => void;

type ActorSystem = AnyActorRef["system"];

/**
 * Fans XState's inspection out to observers that come and go at run time (a visualizer connecting to a
 * running node). Every coordinator shard is the root of its own actor system (its mirror groups and
 * partition actors belong to it); the hub attaches each observer to every system, present and future,
 * through the public `system.inspect()`. With no observer attached, XState builds no inspection events.
 */
export class InspectionHub {
  private readonly systems = new Set<ActorSystem>();
  private readonly observers = new Map<MirrorInspector, Map<ActorSystem, Subscription>>();

  /** Number of actor systems observed now (each loaded shard, each running fetcher). */
  get size(): number {
    return this.systems.size;
  }

  /**
   * Adds an actor system: current and future observers see it from now on. Returns its removal, which its
   * owner calls once the system's actors are gone (a shard that unloaded, a fetcher that stopped), so the
   * hub holds no dead system and the system no observer.
   */
  attach(system: ActorSystem): () => void {
    this.systems.add(system);
    for (const [observer, subs] of this.observers) subs.set(system, system.inspect(asObserver(observer)));
    return () => {
      this.systems.delete(system);
      for (const subs of this.observers.values()) {
        subs.get(system)?.unsubscribe();
        subs.delete(system);
      }
    };
  }

  /** Observes every coordinator actor system, present and future, until the returned function is called. */
  inspect(observer: MirrorInspector): () => void {
    const subs = new Map<ActorSystem, Subscription>();
    for (const system of this.systems) subs.set(system, system.inspect(asObserver(observer)));
    this.observers.set(observer, subs);
    return () => {
      for (const s of subs.values()) s.unsubscribe();
      this.observers.delete(observer);
    };
  }
}

function asObserver(observer: MirrorInspector): Observer<InspectionEvent> {
  return { next: observer };
}
