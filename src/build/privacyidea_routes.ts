/**
 * Writes privacyIDEA's API routes of one release, read from its source, to
 * `tests/fixtures/privacyidea_routes.txt` (one `METHOD /path` a line, path parameters as
 * `:name`). `tests/route_coverage_test.ts` compares them with Tessera's route table and keeps
 * the coverage figure of docs/api.md true.
 *
 * The routes are the `@<blueprint>.route(path, methods=[…])` decorators of `privacyidea/api/*.py`
 * (no methods: GET) under the `url_prefix` each blueprint gets in `privacyidea/app.py`; the web
 * interface's blueprints (`/`, `/certificate`) are not API routes and are left out.
 *
 * Usage: `deno run --allow-run --allow-write src/build/privacyidea_routes.ts <git dir> [tag]`
 * (tag default v3.12.3).
 *
 * @module
 */

/** The routes of the sources given: `app.py`'s text and each API module's text. */
export function privacyideaRoutes(appPy: string, apiModules: readonly string[]): string[] {
  const prefixes = new Map<string, string>();
  for (const m of appPy.matchAll(/register_blueprint\((\w+), url_prefix='([^']*)'\)/g)) {
    prefixes.set(m[1], m[2]);
  }
  const routes = new Set<string>();
  const decorator = /@(\w+)\.route\(\s*['"]([^'"]*)['"]\s*(?:,\s*methods\s*=\s*\[([^\]]*)\])?/g;
  for (const text of apiModules) {
    for (const m of text.matchAll(decorator)) {
      const prefix = prefixes.get(m[1]);
      if (prefix === undefined) throw new Error(`blueprint ${m[1]} has no url_prefix in app.py`);
      const methods = m[3] ? [...m[3].matchAll(/['"](\w+)['"]/g)].map((x) => x[1]) : ["GET"];
      let path = m[2] === "" ? prefix : `${prefix.replace(/\/$/, "")}/${m[2].replace(/^\//, "")}`;
      path = path.replace(/<(?:\w+:)?(\w+)>/g, ":$1");
      if (path !== "/") path = path.replace(/\/+$/, "") || "/";
      for (const method of methods) routes.add(`${method.toUpperCase()} ${path}`);
    }
  }
  return [...routes].sort((a, b) => {
    const [ma, pa] = a.split(" ");
    const [mb, pb] = b.split(" ");
    return pa < pb ? -1 : pa > pb ? 1 : ma < mb ? -1 : ma > mb ? 1 : 0;
  });
}

async function git(gitDir: string, args: string[]): Promise<string> {
  const out = await new Deno.Command("git", { args: ["--git-dir", gitDir, ...args] }).output();
  if (!out.success) throw new Error(new TextDecoder().decode(out.stderr));
  return new TextDecoder().decode(out.stdout);
}

if (import.meta.main) {
  const [gitDir, tag = "v3.12.3"] = Deno.args;
  if (!gitDir) {
    console.error("usage: privacyidea_routes.ts <privacyIDEA git dir> [tag]");
    Deno.exit(2);
  }
  const names = (await git(gitDir, ["ls-tree", "--name-only", `${tag}:privacyidea/api/`]))
    .split("\n").filter((n) => n.endsWith(".py"));
  const modules = await Promise.all(
    names.map((n) => git(gitDir, ["show", `${tag}:privacyidea/api/${n}`])),
  );
  const routes = privacyideaRoutes(
    await git(gitDir, ["show", `${tag}:privacyidea/app.py`]),
    modules,
  );
  const header = `# privacyIDEA ${tag} API routes (src/build/privacyidea_routes.ts; do not edit)\n`;
  await Deno.writeTextFile(
    "tests/fixtures/privacyidea_routes.txt",
    header + routes.join("\n") + "\n",
  );
  console.log(`${routes.length} routes`);
}
