import assert from "node:assert/strict";
import { CONFIG_SCHEMA, loadConfig } from "../src/config.ts";
import { ConfigError } from "../src/errors.ts";

Deno.test("loadConfig gives documented defaults without any input", () => {
  const c = loadConfig();
  assert.equal(c.server.host, "127.0.0.1");
  assert.equal(c.server.port, 5000);
  assert.equal(c.storage.dataDir, "./data");
  assert.equal(c.storage.databaseUrl, "sqlite:./data/tessera.sqlite");
  assert.equal(c.storage.keyFile, "./data/encKey");
  assert.equal(c.auth.jwtLifetime, 3600);
  assert.equal(c.auth.headerPrefix, "PI");
  assert.equal(c.log.level, "info");
  assert.equal(c.subscriptions.mode, "warn");
});

Deno.test("loadConfig layers file, environment and overrides in that order", () => {
  const c = loadConfig({
    fileText: '[server]\nport = 6000\nhost = "0.0.0.0"\n[auth]\nsuperuser_realms = ["Admins"]\n',
    env: { TESSERA_SERVER_PORT: "7000", TESSERA_LOG_LEVEL: "debug", PATH: "/bin" },
    overrides: { dataDir: "/tmp/x", host: "::1" },
  });
  assert.equal(c.server.port, 7000);
  assert.equal(c.server.host, "::1");
  assert.equal(c.log.level, "debug");
  assert.equal(c.storage.dataDir, "/tmp/x");
  assert.equal(c.storage.databaseUrl, "sqlite:/tmp/x/tessera.sqlite");
  assert.deepEqual(c.auth.superuserRealms, ["admins"]);
});

Deno.test("every config key can be set through TESSERA_<SECTION>_<KEY>", () => {
  const samples: Record<string, string> = {
    string: "x",
    int: "42",
    bool: "true",
    "string[]": "a,b",
    clients: '[{"address":"127.0.0.1","secret":"s"}]',
  };
  for (const [section, keys] of Object.entries(CONFIG_SCHEMA)) {
    for (const [key, spec] of Object.entries(keys)) {
      const name = `TESSERA_${section}_${key}`.toUpperCase();
      let value = samples[spec.type];
      if (section === "log") value = key === "format" ? "json" : "warn";
      if (section === "subscriptions" && key === "mode") value = "off";
      if (key === "database_url") value = "sqlite:/tmp/db";
      if (key === "versionnumber") value = "3.13.3";
      if (section === "periodic_tasks" && key === "tick") value = "1000";
      if (key === "time_zone") value = "Europe/Berlin";
      if (key === "server_key_bits") value = "2048";
      if (key === "fcm_url") value = "http://127.0.0.1:9";
      assert.doesNotThrow(() => loadConfig({ env: { [name]: value } }), name);
    }
  }
});

Deno.test("loadConfig reports every problem at once", () => {
  try {
    loadConfig({
      fileText: '[server]\nport = 70000\nbogus = 1\n[nope]\nx = 1\n[log]\nlevel = "loud"\n',
      env: { TESSERA_AUTH_JWT_LIFETIME: "soon", TESSERA_WHAT_EVER: "1" },
    });
    assert.fail("expected a ConfigError");
  } catch (err) {
    assert.ok(err instanceof ConfigError);
    const text = err.problems.join("\n");
    for (
      const part of [
        "unknown key server.bogus",
        "unknown section [nope]",
        "server.port",
        "log.level",
        "TESSERA_AUTH_JWT_LIFETIME",
        "TESSERA_WHAT_EVER",
      ]
    ) {
      assert.ok(text.includes(part), `missing problem about ${part}:\n${text}`);
    }
    assert.equal(err.problems.length, 6);
  }
});

Deno.test("loadConfig refuses wrong types and unparsable TOML", () => {
  assert.throws(() => loadConfig({ fileText: '[server]\nport = "80"\n' }), ConfigError);
  assert.throws(() => loadConfig({ fileText: "[server\n" }), /cannot parse TOML/);
  assert.throws(
    () => loadConfig({ fileText: '[storage]\ndatabase_url = "mysql://x"\n' }),
    /database_url/,
  );
  assert.throws(
    () => loadConfig({ fileText: '[radius]\nclients = [{ address = "1.2.3.4" }]\n' }),
    /secret/,
  );
});

Deno.test("the example config documents every key and loads cleanly", () => {
  const text = Deno.readTextFileSync(new URL("../config/tessera.example.toml", import.meta.url));
  assert.doesNotThrow(() => loadConfig({ fileText: text }));
  for (const [section, keys] of Object.entries(CONFIG_SCHEMA)) {
    assert.ok(text.includes(`[${section}]`), `section ${section} missing`);
    for (const key of Object.keys(keys)) {
      assert.ok(new RegExp(`^# ${key}: `, "m").test(text), `key ${section}.${key} has no comment`);
    }
  }
});

Deno.test("the Deno version is pinned once and the README uses it", () => {
  const pin = Deno.readTextFileSync(new URL("../.deno-version", import.meta.url)).trim();
  const readme = Deno.readTextFileSync(new URL("../README.md", import.meta.url));
  const ci = Deno.readTextFileSync(new URL("../.ci/run", import.meta.url));
  assert.ok(readme.includes(`npx -y deno@${pin} task start`));
  assert.ok(readme.includes(`npx -y deno@${pin} task test`));
  assert.ok(ci.includes(".deno-version"));
  assert.equal(Deno.version.deno, pin);
});

Deno.test("server.remote_user_header takes an HTTP header name or nothing", () => {
  assert.equal(loadConfig().server.remoteUserHeader, "");
  const c = loadConfig({ fileText: '[server]\nremote_user_header = "X-Remote-User"\n' });
  assert.equal(c.server.remoteUserHeader, "X-Remote-User");
  assert.throws(
    () => loadConfig({ fileText: '[server]\nremote_user_header = "X Remote: User"\n' }),
    (err: Error) =>
      err instanceof ConfigError && /remote_user_header.*header name/.test(err.message),
  );
});
