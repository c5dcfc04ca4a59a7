import { h } from "./dom.ts";

/** The history's two version pickers (`From`, `To`), whose options are made a chunk at a time. */
export interface VersionPickers {
  readonly from: HTMLSelectElement;
  readonly to: HTMLSelectElement;
  /** Adds up to `count` of the older versions not yet offered, newest first; false once all are. */
  addOlder(count: number): boolean;
  /** Offers every version at once (before a person picks, or a button sets one). */
  addAll(): void;
}

/**
 * Two selects over versions `0 … count - 1`, `from` on `count - 2` and `to` on `count - 1`.
 * A long history's pickers would hold thousands of options, which cost more to make and lay
 * out than the rest of the first frame: they start with the two newest versions and take the
 * older ones with `addOlder` (the page does it a chunk a frame after its first). Before a
 * person opens one, or the keyboard moves in one, both get them all, so no one picks from a
 * partial list. Options are inserted above the ones there, so what is selected stays selected.
 *
 * @example
 * const pickers = versionPickers(versions.length, (i) => labels[i]);
 * requestAnimationFrame(function more() { if (pickers.addOlder(300)) requestAnimationFrame(more); });
 */
export function versionPickers(count: number, label: (index: number) => string): VersionPickers {
  const option = (index: number, selected: boolean) =>
    h("option", { value: index, selected }, label(index));
  // Versions below `offered` are not options yet.
  let offered = Math.max(0, count - 2);
  const newest = (selected: number) =>
    Array.from({ length: count - offered }, (_, i) =>
      option(offered + i, offered + i === selected),
    );
  const from = h("select", { id: "diff-from" }, ...newest(count - 2));
  const to = h("select", { id: "diff-to" }, ...newest(count - 1));
  const addOlder = (chunk: number): boolean => {
    if (offered === 0) return false;
    const start = Math.max(0, offered - chunk);
    for (const select of [from, to]) {
      const older = [];
      for (let index = start; index < offered; index++) older.push(option(index, false));
      select.prepend(...older);
    }
    offered = start;
    return offered > 0;
  };
  const addAll = () => void addOlder(offered);
  for (const select of [from, to]) {
    // A pointer opens the list on its `mousedown`, after `pointerdown`; keys come after focus.
    select.addEventListener("pointerdown", addAll);
    select.addEventListener("focus", addAll);
  }
  return { from, to, addOlder, addAll };
}
