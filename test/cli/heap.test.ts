import { execFile } from "node:child_process";
import { promisify } from "node:util";
import t from "tap";

const run = promisify(execFile);
const HEAP_MODULE = new URL("../../src/cli/heap.ts", import.meta.url).href;

/**
 * A fresh Node.js process that may call `keepHeapSmall`, then allocates objects of which a
 * share survives a few scavenges (as parsed events do while a batch is applied), and prints
 * the size of its young generation in MiB.
 */
async function youngGeneration(options: {
  keepSmall?: boolean;
  command?: string;
  flags?: string[];
}) {
  const script = `
    import v8 from "node:v8";
    import { keepHeapSmall, setHeapFor } from ${JSON.stringify(HEAP_MODULE)};
    if (${options.keepSmall === true}) keepHeapSmall();
    if (${options.command !== undefined}) setHeapFor([${JSON.stringify(options.command)}, "--config", "x"]);
    const kept = [];
    for (let round = 0; round < 200; round++) {
      const batch = [];
      for (let i = 0; i < 5000; i++) batch.push({ i, text: "event " + i });
      kept.push(batch.slice(0, 2000));
      if (kept.length > 20) kept.shift();
    }
    const young = v8.getHeapSpaceStatistics().find((space) => space.space_name === "new_space");
    process.stdout.write(String(young.space_size / 1048576));
  `;
  const { stdout } = await run(process.execPath, [
    ...(options.flags ?? []),
    "--input-type=module",
    "--eval",
    script,
  ]);
  return Number(stdout);
}

t.test("the long-running commands keep V8's young generation at its first size", async (t) => {
  const grown = await youngGeneration({ keepSmall: false });
  const kept = await youngGeneration({ keepSmall: true });
  t.ok(grown >= 16, `with V8's defaults it grows (${grown} MiB)`);
  t.ok(kept <= 8, `after keepHeapSmall it does not (${kept} MiB)`);
});

t.test("a flag given to Node.js on its command line wins over keepHeapSmall", async (t) => {
  const mine = await youngGeneration({
    keepSmall: true,
    flags: ["--semi-space-growth-factor=2"],
  });
  t.ok(mine >= 16, `the young generation grows as the command line asked (${mine} MiB)`);
});

t.test(
  "annal import keeps V8's own sizing; the server and the other commands keep it small",
  async (t) => {
    const importing = await youngGeneration({ command: "import" });
    t.ok(importing >= 16, `annal import's young generation grows (${importing} MiB)`);
    for (const command of ["start", "replay"]) {
      const size = await youngGeneration({ command });
      t.ok(size <= 8, `annal ${command}'s does not (${size} MiB)`);
    }
  },
);
