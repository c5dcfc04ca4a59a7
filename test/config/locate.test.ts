import { join } from "node:path";
import t from "tap";
import { DEMO_CONFIG_PATH, loadConfig } from "../../src/config/index.ts";

const portFile = (port: number) => `[server]\nport = ${port}\n`;

t.test("--config <path> wins over ANNAL_CONFIG and ./annal.toml", async (t) => {
  const dir = t.testdir({
    "chosen.toml": portFile(5001),
    "from-env.toml": portFile(5002),
    "annal.toml": portFile(5003),
  });
  const config = await loadConfig({
    argv: ["start", "--config", "chosen.toml"],
    env: { ANNAL_CONFIG: "from-env.toml" },
    cwd: dir,
  });
  t.equal(config.server.port, 5001);
  t.same(config.source, { path: join(dir, "chosen.toml"), demo: false });
});

t.test("--config=<path> is read too, and the last one given wins", async (t) => {
  const dir = t.testdir({ "a.toml": portFile(5001), "b.toml": portFile(5002) });
  const config = await loadConfig({
    argv: ["--config=a.toml", "--config=b.toml"],
    env: {},
    cwd: dir,
  });
  t.equal(config.server.port, 5002);
});

t.test("nothing after -- is taken for --config", async (t) => {
  const dir = t.testdir({ "annal.toml": portFile(5003), "other.toml": portFile(5001) });
  const config = await loadConfig({ argv: ["--", "--config", "other.toml"], env: {}, cwd: dir });
  t.equal(config.server.port, 5003);
});

t.test("--config without a path is refused", async (t) => {
  const dir = t.testdir({});
  await t.rejects(loadConfig({ argv: ["--config"], env: {}, cwd: dir }), {
    code: "ANNAL_CONFIG_INVALID",
  });
  await t.rejects(loadConfig({ argv: ["--config="], env: {}, cwd: dir }), {
    code: "ANNAL_CONFIG_INVALID",
  });
});

t.test("the configPath option wins over --config", async (t) => {
  const dir = t.testdir({ "a.toml": portFile(5001), "b.toml": portFile(5002) });
  const config = await loadConfig({
    configPath: join(dir, "b.toml"),
    argv: ["--config", "a.toml"],
    env: {},
    cwd: dir,
  });
  t.equal(config.server.port, 5002);
});

t.test("ANNAL_CONFIG wins over ./annal.toml", async (t) => {
  const dir = t.testdir({ "from-env.toml": portFile(5002), "annal.toml": portFile(5003) });
  const config = await loadConfig({ argv: [], env: { ANNAL_CONFIG: "from-env.toml" }, cwd: dir });
  t.equal(config.server.port, 5002);
  t.equal(config.source.path, join(dir, "from-env.toml"));
});

t.test("./annal.toml is read when nothing names a file", async (t) => {
  const dir = t.testdir({ "annal.toml": portFile(5003) });
  const config = await loadConfig({ argv: [], env: {}, cwd: dir });
  t.equal(config.server.port, 5003);
  t.same(config.source, { path: join(dir, "annal.toml"), demo: false });
});

t.test("the demo configuration is read when there is no ./annal.toml", async (t) => {
  const dir = t.testdir({});
  const config = await loadConfig({ argv: [], env: {}, cwd: dir });
  t.same(config.source, { path: DEMO_CONFIG_PATH, demo: true });
});

t.test("a file named by --config or ANNAL_CONFIG that does not exist is an error", async (t) => {
  const dir = t.testdir({ "annal.toml": portFile(5003) });
  await t.rejects(loadConfig({ argv: ["--config", "nope.toml"], env: {}, cwd: dir }), {
    code: "ANNAL_CONFIG_NOT_FOUND",
    file: join(dir, "nope.toml"),
    message: /nope\.toml.*--config/,
  });
  await t.rejects(loadConfig({ argv: [], env: { ANNAL_CONFIG: "gone.toml" }, cwd: dir }), {
    code: "ANNAL_CONFIG_NOT_FOUND",
    message: /gone\.toml.*ANNAL_CONFIG/,
  });
});

t.test("a configuration path that is a directory is reported as unreadable", async (t) => {
  const dir = t.testdir({ "conf.d": {} });
  await t.rejects(loadConfig({ argv: ["--config", "conf.d"], env: {}, cwd: dir }), {
    code: "ANNAL_CONFIG_UNREADABLE",
  });
});

t.test("relative paths in the file resolve against the working directory", async (t) => {
  const dir = t.testdir({ etc: { "annal.toml": '[database]\ndataDir = "state"\n' } });
  const config = await loadConfig({ argv: ["--config", "etc/annal.toml"], env: {}, cwd: dir });
  t.equal(config.database.dataDir, join(dir, "state"));
});
