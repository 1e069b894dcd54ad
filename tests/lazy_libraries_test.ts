/**
 * The server's module graph (`deno info --json main.ts`): the libraries that
 * serve rare features load on first use (a dynamic import inside the module
 * that owns them), never with the server, so a static import of one of them
 * anywhere fails here. The test tools (playwright-core, axe-core) are not in
 * the graph at all.
 */
import assert from "node:assert/strict";

const ROOT = new URL("../", import.meta.url).pathname;

/** npm packages that only rare features need: reached only through dynamic imports. */
const LAZY_PACKAGES = [
  "openpgp",
  "mysql2",
  "pkijs",
  "asn1js",
  "@peculiar/x509",
  "reflect-metadata",
  "@simplewebauthn/server",
  "prom-client",
  "cron-parser",
];

/** Packages of the tests and the web UI's build that the server must never load. */
const NEVER_PACKAGES = ["playwright-core", "axe-core"];

interface InfoDependency {
  specifier: string;
  code?: { specifier?: string };
  isDynamic?: boolean;
}

interface InfoModule {
  kind: string;
  specifier: string;
  npmPackage?: string;
  dependencies?: InfoDependency[];
}

interface Info {
  roots: string[];
  modules: InfoModule[];
  redirects: Record<string, string>;
  npmPackages: Record<string, { name: string; dependencies: string[] }>;
}

async function serverGraph(): Promise<Info> {
  const out = await new Deno.Command(Deno.execPath(), {
    args: ["info", "--json", "main.ts"],
    cwd: ROOT,
    stdout: "piped",
    stderr: "piped",
  }).output();
  assert.equal(out.code, 0, new TextDecoder().decode(out.stderr));
  return JSON.parse(new TextDecoder().decode(out.stdout)) as Info;
}

/**
 * The npm packages (names) the graph reaches from its roots, with their own
 * dependencies: through static imports only, or through every import.
 */
function reachedPackages(info: Info, withDynamic: boolean): Set<string> {
  const modules = new Map(info.modules.map((m) => [m.specifier, m]));
  const seen = new Set<string>();
  const packageIds: string[] = [];
  const queue = [...info.roots];
  while (queue.length > 0) {
    const specifier = queue.pop()!;
    const resolved = info.redirects[specifier] ?? specifier;
    if (seen.has(resolved)) continue;
    seen.add(resolved);
    const m = modules.get(resolved);
    if (!m) continue;
    if (m.npmPackage) packageIds.push(m.npmPackage);
    for (const dep of m.dependencies ?? []) {
      // a type-only import has no `code`; a dynamic one loads on first use
      if (dep.code?.specifier && (withDynamic || !dep.isDynamic)) queue.push(dep.code.specifier);
    }
  }
  const names = new Set<string>();
  const seenIds = new Set<string>();
  while (packageIds.length > 0) {
    const id = packageIds.pop()!;
    if (seenIds.has(id)) continue;
    seenIds.add(id);
    const pkg = info.npmPackages[id];
    if (!pkg) continue;
    names.add(pkg.name);
    packageIds.push(...pkg.dependencies);
  }
  return names;
}

Deno.test("rare libraries are reached only through dynamic imports (loaded on first use)", async () => {
  const info = await serverGraph();
  const atStart = reachedPackages(info, false);
  const all = reachedPackages(info, true);
  // the libraries are still in the graph, so `deno compile` includes them
  for (const name of LAZY_PACKAGES) assert.ok(all.has(name), `${name} is not in the graph`);
  const loadedAtStart = LAZY_PACKAGES.filter((name) => atStart.has(name));
  assert.deepEqual(loadedAtStart, [], "these load with the server (a static import)");
  // the check sees the packages the server does load at start
  for (const name of ["hono", "kysely", "pg"]) assert.ok(atStart.has(name), name);
});

Deno.test("the server's graph has no test tools", async () => {
  const all = reachedPackages(await serverGraph(), true);
  assert.deepEqual(NEVER_PACKAGES.filter((name) => all.has(name)), []);
});
