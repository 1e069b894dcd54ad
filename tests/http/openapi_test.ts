import assert from "node:assert/strict";
import { createTestApp } from "../test_app.ts";

Deno.test("GET /openapi.json describes every route the app registers, with its path parameters and rights", async () => {
  const t = await createTestApp();
  const res = await t.get("/openapi.json");
  assert.equal(res.status, 200);
  assert.match(res.headers.get("content-type") ?? "", /application\/json/);
  const doc = await res.json();
  assert.equal(doc.openapi, "3.1.0");
  const listed = new Set<string>();
  for (const [path, item] of Object.entries(doc.paths as Record<string, Record<string, unknown>>)) {
    for (const method of Object.keys(item)) listed.add(`${method.toUpperCase()} ${path}`);
  }
  for (const r of t.app.routes) {
    if (r.method === "ALL") continue;
    const path = r.path.replace(/:([A-Za-z0-9_]+)/g, "{$1}").replace(/(.)\/+$/, "$1");
    assert.ok(listed.has(`${r.method} ${path}`), `${r.method} ${path} is missing`);
  }
  const disable = doc.paths["/token/disable/{serial}"].post;
  assert.deepEqual(disable.parameters.map((p: { name: string }) => p.name), ["serial"]);
  assert.match(disable.description, /Policy action `disable`/);
  assert.deepEqual(disable.security, [{ jwt: [] }]);
  assert.deepEqual(doc.paths["/validate/check"].post.security, []);
  assert.ok(doc.components.schemas.Envelope.properties.result);
  await t.close();
});
