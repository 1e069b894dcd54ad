/**
 * The route coverage figure of docs/api.md: privacyIDEA 3.12.3's API routes
 * (tests/fixtures/privacyidea_routes.txt, written from its source by
 * src/build/privacyidea_routes.ts) against Tessera's route table. Each privacyIDEA route is
 * answered by a Tessera route of the same method and path (path parameters match any name), or
 * refused by Tessera with a reason (it answers 404 and says why), or missing with a reason given
 * here. A route missing without a reason, a reason no route needs, or a docs/api.md section that
 * differs from the figure fails the test; `UPDATE_DOCS=1 deno test -A
 * tests/route_coverage_test.ts` rewrites the section.
 */
import assert from "node:assert/strict";
import { createTestApp, jsonOf } from "./test_app.ts";

const FIXTURE = new URL("./fixtures/privacyidea_routes.txt", import.meta.url);
const DOC = new URL("../docs/api.md", import.meta.url);
const START = "<!-- route-coverage:start (tests/route_coverage_test.ts) -->";
const END = "<!-- route-coverage:end -->";

/** Routes Tessera has and refuses with 404 and a reason (the reason is in the answer). */
const REFUSED: Readonly<Record<string, string>> = {
  "GET /system/hsm": "no hardware security module",
  "POST /system/hsm": "no hardware security module",
};

/** Routes Tessera answers only for some values of a path parameter. */
const PARTIAL: Readonly<Record<string, { why: string; prefix: string }>> = {
  "GET /ttype/:ttype": {
    why: "for the token types Tessera has such an endpoint for",
    prefix: "/ttype/",
  },
  "POST /ttype/:ttype": {
    why: "for the token types Tessera has such an endpoint for",
    prefix: "/ttype/",
  },
};

/** Missing routes by path prefix, and why. */
const MISSING: readonly { prefix: string; why: string }[] = [];

const norm = (path: string) => path.replace(/\/:[^/]+/g, "/:").replace(/\/+$/, "") || "/";

interface Coverage {
  total: number;
  /** Per partial route, the paths Tessera answers of it. */
  partialPaths: Map<string, string[]>;
  answered: string[];
  partial: string[];
  refused: string[];
  missing: Map<string, string[]>;
  unexplained: string[];
}

function coverage(piRoutes: string[], ours: Set<string>): Coverage {
  const c: Coverage = {
    total: piRoutes.length,
    partialPaths: new Map(),
    answered: [],
    partial: [],
    refused: [],
    missing: new Map(),
    unexplained: [],
  };
  for (const route of piRoutes) {
    const [method, path] = route.split(" ");
    const has = ours.has(`${method} ${norm(path)}`);
    if (has && REFUSED[route]) c.refused.push(route);
    else if (has) c.answered.push(route);
    else if (PARTIAL[route]) {
      const paths = [...ours].filter((r) => r.startsWith(`${method} ${PARTIAL[route].prefix}`))
        .map((r) => r.split(" ")[1]).sort();
      if (paths.length > 0) {
        c.partial.push(route);
        c.partialPaths.set(route, paths);
      } else c.unexplained.push(route);
    } else {
      const reason = MISSING.find((m) => path === m.prefix || path.startsWith(`${m.prefix}/`));
      if (!reason) c.unexplained.push(route);
      else c.missing.set(reason.why, [...c.missing.get(reason.why) ?? [], route]);
    }
  }
  return c;
}

function section(c: Coverage): string {
  const missing = [...c.missing.values()].reduce((n, l) => n + l.length, 0);
  const lines = [
    START,
    "",
    `Of privacyIDEA 3.12.3's ${c.total} API routes (its \`privacyidea/api/*.py\` blueprints), Tessera`,
    `answers ${c.answered.length}, answers ${c.partial.length} in part, refuses ${c.refused.length} with a reason and`,
    `lacks ${missing}:`,
    "",
    "| privacyIDEA routes | Tessera |",
    "| --- | --- |",
    ...c.partial.map((r) =>
      `| \`${r}\` | in part, ${PARTIAL[r].why}: ${
        c.partialPaths.get(r)!.map((p) => `\`${p}\``).join(", ")
      } |`
    ),
    ...c.refused.map((r) => `| \`${r}\` | refused (404): ${REFUSED[r]} |`),
    ...[...c.missing.entries()].map(([why, routes]) =>
      `| ${routes.length} routes under \`${
        routes[0].split(" ")[1].split("/").slice(0, 2).join("/")
      }\` | missing: ${why} |`
    ),
    "",
    "Tessera's own routes beyond these (`/dashboard/tokens`, `/ca/<name>/crl`, `/openapi.json`,",
    "`/metrics`, …) are listed in the endpoint table above. The figure is computed by tests/route_coverage_test.ts",
    "from the route table and tests/fixtures/privacyidea_routes.txt (src/build/privacyidea_routes.ts).",
    "",
    END,
  ];
  return lines.join("\n");
}

/** `text` as `deno fmt` (the project's settings) writes it, so the check survives formatting. */
async function formatMarkdown(text: string): Promise<string> {
  const child = new Deno.Command(Deno.execPath(), {
    args: ["fmt", "--line-width", "100", "--ext", "md", "-"],
    stdin: "piped",
    stdout: "piped",
  }).spawn();
  const writer = child.stdin.getWriter();
  await writer.write(new TextEncoder().encode(text));
  await writer.close();
  const out = await child.output();
  assert.ok(out.success, "deno fmt formats docs/api.md");
  return new TextDecoder().decode(out.stdout);
}

Deno.test("route coverage: every privacyIDEA 3.12.3 API route is answered, refused or missing with a reason, and docs/api.md says so", async () => {
  const t = await createTestApp();
  try {
    const routes = t.app.routes.filter((r) => r.method !== "ALL");
    const ours = new Set(routes.map((r) => `${r.method} ${norm(r.path)}`));
    const pi = (await Deno.readTextFile(FIXTURE)).split("\n")
      .filter((l) => l !== "" && !l.startsWith("#"));
    assert.equal(pi.length, 216, "privacyIDEA 3.12.3 has 216 API routes");
    const c = coverage(pi, ours);
    assert.deepEqual(c.unexplained, [], "missing routes without a reason (add the route or one)");
    // every reason and refusal is used, and a refused route says why when called
    for (const m of MISSING) assert.ok(c.missing.has(m.why), `unused reason: ${m.prefix}`);
    for (const route of Object.keys(REFUSED)) {
      assert.ok(c.refused.includes(route), `${route} is not in Tessera's route table`);
      const [method, path] = route.split(" ");
      const res = await jsonOf(await t.asAdmin(method, path));
      assert.equal(res.status, 404, route);
      assert.match(res.body.result.error.message, /is not available in Tessera: /, route);
    }
    const text = await Deno.readTextFile(DOC);
    const start = text.indexOf(START);
    const end = text.indexOf(END);
    assert.ok(start >= 0 && end > start, "docs/api.md has the route coverage markers");
    const updated = await formatMarkdown(
      text.slice(0, start) + section(c) + text.slice(end + END.length),
    );
    if (Deno.env.get("UPDATE_DOCS") === "1") await Deno.writeTextFile(DOC, updated);
    assert.equal(
      text,
      updated,
      "docs/api.md's route coverage is out of date: run UPDATE_DOCS=1 deno test -A " +
        "tests/route_coverage_test.ts",
    );
  } finally {
    await t.close();
  }
});
