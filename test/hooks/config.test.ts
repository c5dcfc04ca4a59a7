import path from "node:path";
import t from "tap";
import { parseConfig } from "../../src/config/index.ts";

const parse = (text: string) =>
  parseConfig(text, { path: "annal.toml", env: {}, cwd: "/srv/annal" });

t.test(
  "[hooks] is optional; its dir defaults to hooks, against the working directory",
  async (t) => {
    t.equal(parse("").hooks, undefined, "no table: no hooks");
    t.same(parse("[hooks]\n").hooks, { dir: path.join("/srv/annal", "hooks"), concurrency: 10 });
    t.same(parse('[hooks]\ndir = "ops/demo/hooks"\nconcurrency = 4\n').hooks, {
      dir: path.join("/srv/annal", "ops/demo/hooks"),
      concurrency: 4,
    });
    t.throws(() => parse("[hooks]\nconcurrency = 0\n"), { code: "ANNAL_CONFIG_INVALID" });
    t.throws(() => parse('[hooks]\ndirectory = "x"\n'), { code: "ANNAL_CONFIG_UNKNOWN_KEY" });
  },
);
