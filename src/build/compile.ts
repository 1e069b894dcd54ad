/**
 * The compile step of `deno task compile`: runs `deno compile` with the
 * task's arguments and leaves out the npm package files that `deno compile`
 * cannot embed. The task type-checks with `deno check` before, in a process
 * of its own: `deno compile --v8-flags=…` applies the runtime's heap limit to
 * the compiler too, and the type check does not fit in it; the compile itself
 * runs with `--no-check`.
 *
 * @module
 */

/** npm package files that are not needed at run time and that `deno compile` cannot embed. */
const EXCLUDED: { name: string; path: string }[] = [
  // bintrees (prom-client → tdigest → bintrees) ships test/perf/100k, 2 MB of numbers without a
  // file extension: deno compile 2.9.6 overflows its stack on it ("has overflowed its stack")
  { name: "bintrees", path: "test" },
];

/** Deno's npm package cache (`deno info --json`, honours DENO_DIR). */
function npmCacheDir(): string {
  const out = new Deno.Command(Deno.execPath(), {
    args: ["info", "--json"],
    stdout: "piped",
    stderr: "inherit",
  }).outputSync();
  if (!out.success) throw new Error("deno info --json failed");
  return JSON.parse(new TextDecoder().decode(out.stdout)).npmCache;
}

function subdirectories(path: string): string[] {
  try {
    return [...Deno.readDirSync(path)].filter((e) => e.isDirectory).map((e) => `${path}/${e.name}`);
  } catch (err) {
    if (err instanceof Deno.errors.NotFound) return [];
    throw err;
  }
}

/** The cached copies (every registry, every version) of the {@link EXCLUDED} paths. */
export function excludedPaths(npmCache: string): string[] {
  const paths: string[] = [];
  for (const registry of subdirectories(npmCache)) {
    for (const { name, path } of EXCLUDED) {
      for (const version of subdirectories(`${registry}/${name}`)) {
        paths.push(`${version}/${path}`);
      }
    }
  }
  return paths;
}

function deno(args: string[]): number {
  return new Deno.Command(Deno.execPath(), {
    args,
    stdin: "inherit",
    stdout: "inherit",
    stderr: "inherit",
  }).outputSync().code;
}

if (import.meta.main) {
  // every package of the lockfile is embedded: have them all in the cache before looking there
  const installed = deno(["install", "--quiet"]);
  if (installed !== 0) Deno.exit(installed);
  const excludes = excludedPaths(npmCacheDir()).flatMap((p) => ["--exclude", p]);
  // the excludes go first: everything after the entry module is an argument of the program
  Deno.exit(deno(["compile", ...excludes, ...Deno.args]));
}
