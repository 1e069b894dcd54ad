/**
 * PSKC files with a password-derived key (PBKDF2): the rounds a file may ask
 * for are bounded, and the derivation runs off the request loop, so a served
 * Tessera keeps answering `/healthz/` while an upload derives its key.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf, type TestApp } from "../test_app.ts";
import { hotp } from "../fixtures/tokens.ts";
import { serveApp } from "../http/_serve_app.ts";
import { MAX_PBKDF2_ITERATIONS } from "../../src/domain/import/pskc.ts";
import { listTokens } from "../../src/domain/token/mod.ts";
import { pbkdf2File } from "./_pskc.ts";

const SECRET = "4142434445464748494a4b4c4d4e4f5051525354";

function form(fields: Record<string, string>, file: string): FormData {
  const f = new FormData();
  for (const [k, v] of Object.entries(fields)) f.set(k, v);
  f.set("file", new File([file], "tokens.pskc"));
  return f;
}

async function uploadTo(base: string, token: string, body: FormData) {
  return await jsonOf(
    await fetch(`${base}/token/load/tokens.pskc`, {
      method: "POST",
      body,
      headers: { "PI-Authorization": token },
    }),
  );
}

async function tokenCount(t: TestApp): Promise<number> {
  return (await listTokens(t.deps, {})).count;
}

Deno.test("POST /token/load: /healthz/ answers within 500 ms while a PSKC upload derives its PBKDF2 key at the bound", async () => {
  const t = await createTestApp();
  const served = serveApp(t);
  try {
    const token = await t.adminToken();
    // built before the measurement: the test derives the key once itself
    const file = pbkdf2File({
      iterations: MAX_PBKDF2_ITERATIONS,
      password: "qwerty",
      serial: "PBKDF20",
      secretHex: SECRET,
    });
    const latencies: number[] = [];
    let isUploading = true;
    const started = performance.now();
    // the upload derives its key with the most rounds allowed
    const answer = uploadTo(served.url, token, form({ type: "pskc", password: "qwerty" }, file))
      .finally(() => isUploading = false);
    const polling = (async () => {
      while (isUploading) {
        const sent = performance.now();
        const res = await fetch(`${served.url}/healthz/`);
        await res.body?.cancel();
        assert.equal(res.status, 200);
        if (isUploading) latencies.push(performance.now() - sent);
        await new Promise((r) => setTimeout(r, 20));
      }
    })();
    const res = await answer;
    const elapsed = performance.now() - started;
    await polling;
    assert.equal(res.status, 200, JSON.stringify(res.body));
    assert.deepEqual(res.body.result.value, { n_imported: 1, n_not_imported: 0 });
    // none of the polls waited behind the derivation, and they kept going during the upload
    // (a derivation on the request loop lets at most one through while it runs)
    const slowest = Math.max(...latencies);
    assert.ok(
      slowest < 500,
      `/healthz/ took ${Math.round(slowest)} ms during the upload (${latencies.length} polls)`,
    );
    assert.ok(latencies.length >= 3, `only ${latencies.length} polls in ${Math.round(elapsed)} ms`);
    const check = await jsonOf(
      await t.post("/validate/check", { serial: "PBKDF20", pass: hotp(0, SECRET) }),
    );
    assert.equal(check.body.result.value, true);
  } finally {
    await served.close();
    await t.close();
  }
});

Deno.test("POST /token/load refuses a PSKC file asking for more PBKDF2 rounds than the bound; nothing is written", async () => {
  const t = await createTestApp();
  try {
    const file = pbkdf2File({
      iterations: MAX_PBKDF2_ITERATIONS + 1,
      password: "qwerty",
      serial: "TOOMANY1",
      secretHex: SECRET,
      derive: false,
    });
    const res = await jsonOf(
      await t.app.request("http://localhost/token/load/tokens.pskc", {
        method: "POST",
        body: form({ type: "pskc", password: "qwerty" }, file),
        headers: { "PI-Authorization": await t.adminToken() },
      }, { remoteAddr: { hostname: "127.0.0.1" } }),
    );
    assert.equal(res.status, 400, JSON.stringify(res.body));
    assert.equal(res.body.result.status, false);
    assert.equal(res.body.result.error.code, 304);
    assert.equal(
      res.body.result.error.message,
      "ERR304: The PBKDF2 IterationCount 1000001 is above the limit of 1000000",
    );
    assert.equal(await tokenCount(t), 0);
    // a count that is not a whole number is refused too
    const odd = await jsonOf(
      await t.app.request("http://localhost/token/load/tokens.pskc", {
        method: "POST",
        body: form(
          { type: "pskc", password: "qwerty" },
          file.replace("<IterationCount>1000001<", "<IterationCount>1e6<"),
        ),
        headers: { "PI-Authorization": await t.adminToken() },
      }, { remoteAddr: { hostname: "127.0.0.1" } }),
    );
    assert.equal(odd.status, 400);
    assert.equal(odd.body.result.error.message, "ERR304: Cannot read the PBKDF2 IterationCount");
    assert.equal(await tokenCount(t), 0);
  } finally {
    await t.close();
  }
});
