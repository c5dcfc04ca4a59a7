import t from "tap";
import { parseConfig } from "../../src/config/index.ts";

const path = "annal.toml";
const file = '[server]\nport = 4173\n[database]\nurl = "postgres://from-file/annal"\n';

t.test("DATABASE_URL overrides database.url", async (t) => {
  const config = parseConfig(file, { path, env: { DATABASE_URL: "postgresql://from-env/annal" } });
  t.equal(config.database.url, "postgresql://from-env/annal");
});

t.test("DATABASE_URL applies when the file has no [database]", async (t) => {
  const config = parseConfig("", { path, env: { DATABASE_URL: "postgres://h/db" } });
  t.equal(config.database.url, "postgres://h/db");
  t.equal(config.database.poolSize, 10);
});

t.test("a bad DATABASE_URL names the variable but not its value", async (t) => {
  const error = t.throws(() => parseConfig(file, { path, env: { DATABASE_URL: "not a url pw" } }));
  t.match(error, {
    code: "ANNAL_CONFIG_INVALID",
    message: /database\.url \(set by the environment variable DATABASE_URL\)/,
  });
  t.notMatch((error as Error).message, /not a url pw/);
});

t.test("PORT overrides server.port", async (t) => {
  t.equal(parseConfig(file, { path, env: { PORT: "8080" } }).server.port, 8080);
  t.equal(parseConfig("", { path, env: { PORT: "65535" } }).server.port, 65535);
});

t.test("an empty PORT or DATABASE_URL counts as unset", async (t) => {
  const config = parseConfig(file, { path, env: { PORT: "", DATABASE_URL: "" } });
  t.equal(config.server.port, 4173);
  t.equal(config.database.url, "postgres://from-file/annal");
});

t.test("a PORT that is not an integer from 1 to 65535 is refused", async (t) => {
  for (const port of ["0", "65536", "http", "80.5", "-1", " 80"]) {
    t.throws(
      () => parseConfig(file, { path, env: { PORT: port } }),
      {
        code: "ANNAL_CONFIG_INVALID",
        keys: ["server.port"],
        message:
          /server\.port \(set by the environment variable PORT\): expected a whole number from 1 to 65535/,
      },
      port,
    );
  }
});
