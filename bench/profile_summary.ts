/**
 * Summarises a V8 .cpuprofile (from `deno task bench --profile`, which runs
 * the server with `--cpu-prof`): where the server's CPU time goes, by
 * function (self and inclusive time) and by file.
 *
 * Run: deno run -A bench/profile_summary.ts <file.cpuprofile> [top N]
 *
 * @module
 */

/** The parts of a .cpuprofile this summary reads. */
export interface CpuProfile {
  nodes: {
    id: number;
    callFrame: { functionName: string; url: string; lineNumber: number };
    children?: number[];
  }[];
  samples: number[];
  timeDeltas: number[];
}

/** One line of the summary: a name with self and inclusive milliseconds. */
export interface ProfileRow {
  name: string;
  selfMs: number;
  totalMs: number;
}

/** Shortens a script URL: project files relative, npm packages by name, Deno internals as is. */
export function shortUrl(url: string): string {
  if (url === "") return "(native)";
  const npm = url.match(/\/npm\/registry\.npmjs\.org\/((?:@[^/]+\/)?[^/]+)\/[^/]+\/(.*)$/);
  if (npm) return `npm:${npm[1]}/${npm[2]}`;
  const project = url.match(/\/((?:src|bench|tests)\/.*|main\.ts)$/);
  if (project) return project[1];
  return url.replace(/^file:\/\//, "");
}

/** Self and inclusive time per function and per file, biggest first. */
export function summarize(profile: CpuProfile, options: { skipMs?: number } = {}): {
  totalMs: number;
  functions: ProfileRow[];
  files: ProfileRow[];
} {
  const selfUs = new Map<number, number>();
  const skipUs = (options.skipMs ?? 0) * 1000;
  let at = 0;
  profile.samples.forEach((id, i) => {
    at += profile.timeDeltas[i] ?? 0;
    if (at < skipUs) return;
    selfUs.set(id, (selfUs.get(id) ?? 0) + (profile.timeDeltas[i] ?? 0));
  });
  const byId = new Map(profile.nodes.map((n) => [n.id, n]));
  const parent = new Map<number, number>();
  for (const n of profile.nodes) for (const c of n.children ?? []) parent.set(c, n.id);
  const fnName = (id: number) => {
    const f = byId.get(id)!.callFrame;
    return `${f.functionName || "(anonymous)"} ${shortUrl(f.url)}:${f.lineNumber + 1}`;
  };
  const fileName = (id: number) => shortUrl(byId.get(id)!.callFrame.url);
  const fns = new Map<string, ProfileRow>();
  const files = new Map<string, ProfileRow>();
  const row = (m: Map<string, ProfileRow>, name: string) => {
    let r = m.get(name);
    if (!r) m.set(name, r = { name, selfMs: 0, totalMs: 0 });
    return r;
  };
  let totalUs = 0;
  for (const [id, us] of selfUs) {
    totalUs += us;
    row(fns, fnName(id)).selfMs += us / 1000;
    row(files, fileName(id)).selfMs += us / 1000;
    // inclusive: count each distinct function/file once per stack
    const seenFn = new Set<string>();
    const seenFile = new Set<string>();
    for (let cur: number | undefined = id; cur !== undefined; cur = parent.get(cur)) {
      const f = fnName(cur);
      if (!seenFn.has(f)) {
        seenFn.add(f);
        row(fns, f).totalMs += us / 1000;
      }
      const file = fileName(cur);
      if (!seenFile.has(file)) {
        seenFile.add(file);
        row(files, file).totalMs += us / 1000;
      }
    }
  }
  const sorted = (m: Map<string, ProfileRow>, key: "selfMs" | "totalMs") =>
    [...m.values()].sort((a, b) => b[key] - a[key]);
  return {
    totalMs: totalUs / 1000,
    functions: sorted(fns, "selfMs"),
    files: sorted(files, "selfMs"),
  };
}

function print(title: string, rows: ProfileRow[], totalMs: number, top: number): void {
  console.log(`\n${title}`);
  console.log("   self%   total%  name");
  for (const r of rows.slice(0, top)) {
    const p = (ms: number) => `${((ms / totalMs) * 100).toFixed(1).padStart(6)}%`;
    console.log(`  ${p(r.selfMs)}  ${p(r.totalMs)}  ${r.name}`);
  }
}

if (import.meta.main) {
  const [path, topText] = Deno.args;
  if (!path) {
    console.error("Usage: deno run -A bench/profile_summary.ts <file.cpuprofile> [top N]");
    Deno.exit(2);
  }
  const top = Number(topText ?? 25);
  const s = summarize(JSON.parse(Deno.readTextFileSync(path)));
  console.log(`${path}: ${(s.totalMs / 1000).toFixed(1)} s of samples`);
  print("By file (self time):", s.files, s.totalMs, top);
  print("By function (self time):", s.functions, s.totalMs, top);
  const inclusive = [...s.functions].sort((a, b) => b.totalMs - a.totalMs)
    .filter((r) => !r.name.startsWith("(root)") && !r.name.startsWith("(program)"));
  print("By function (inclusive time):", inclusive, s.totalMs, top);
}
