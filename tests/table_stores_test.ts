/**
 * The table → store list (DEVELOPERS.md, section "Tables and their stores")
 * against the source: each table of src/db/schema.ts is written (Kysely's
 * `insertInto`, `updateTable`, `deleteFrom`, `replaceInto`, `mergeInto` with
 * the table's name) by its one listed store only, and read (`selectFrom`,
 * joins) only by that store and the stores listed as its readers. Migrations
 * are left out (they create the tables), and so is the browser code.
 *
 * @module
 */
import assert from "node:assert/strict";

const ROOT = new URL("..", import.meta.url).pathname;

const WRITE_REGEXP = /\.(?:insertInto|updateTable|deleteFrom|replaceInto|mergeInto)\(\s*"(\w+)/g;
const READ_REGEXP = /\.(?:selectFrom|innerJoin|leftJoin|rightJoin|fullJoin)\(\s*"(\w+)/g;

/** Where each table is written and read, by file (paths relative to the root). */
export interface TableUse {
  writers: Map<string, Set<string>>;
  readers: Map<string, Set<string>>;
}

/** The statements with a table name in the given files' texts. */
export function tableUse(files: Record<string, string>): TableUse {
  const use: TableUse = { writers: new Map(), readers: new Map() };
  const add = (map: Map<string, Set<string>>, table: string, file: string) => {
    if (!map.has(table)) map.set(table, new Set());
    map.get(table)!.add(file);
  };
  for (const [file, text] of Object.entries(files)) {
    for (const m of text.matchAll(WRITE_REGEXP)) add(use.writers, m[1], file);
    for (const m of text.matchAll(READ_REGEXP)) add(use.readers, m[1], file);
  }
  return use;
}

/** One row of the section: the writing store ("" when none) and the other readers. */
export interface Owner {
  writer: string;
  readers: string[];
}

/** The rows of the "Tables and their stores" section of DEVELOPERS.md. */
export function readOwners(text: string): Map<string, Owner> {
  const start = text.indexOf("\n## Tables and their stores\n");
  assert.ok(start >= 0, 'DEVELOPERS.md has no section "## Tables and their stores"');
  const end = text.indexOf("\n## ", start + 1);
  const section = text.slice(start, end < 0 ? undefined : end);
  const owners = new Map<string, Owner>();
  for (const line of section.split("\n")) {
    const cells = line.split("|").slice(1, -1).map((c) => c.trim());
    if (cells.length !== 3 || !/^`\w+`$/.test(cells[0])) continue;
    const paths = (cell: string) => [...cell.matchAll(/`(src\/[^`]+)`/g)].map((m) => m[1]);
    const writers = paths(cells[1]);
    assert.ok(writers.length <= 1, `${cells[0]} names more than one writing store`);
    owners.set(cells[0].slice(1, -1), { writer: writers[0] ?? "", readers: paths(cells[2]) });
  }
  return owners;
}

/** The tables of the `Database` interface in src/db/schema.ts. */
function schemaTables(): string[] {
  const text = Deno.readTextFileSync(`${ROOT}src/db/schema.ts`);
  const body = text.match(/export interface Database \{([^}]*)\}/);
  assert.ok(body, "src/db/schema.ts has no Database interface");
  return [...body[1].matchAll(/^\s*(\w+): \w+;/gm)].map((m) => m[1]);
}

function sourceFiles(dir: string, out: Record<string, string> = {}): Record<string, string> {
  for (const entry of Deno.readDirSync(`${ROOT}${dir}`)) {
    const path = `${dir}/${entry.name}`;
    if (path === "src/db/migrations" || path === "src/ui/app") continue;
    if (entry.isDirectory) sourceFiles(path, out);
    else if (/\.tsx?$/.test(entry.name)) out[path] = Deno.readTextFileSync(`${ROOT}${path}`);
  }
  return out;
}

/** What differs between the list and the source, one line per problem. */
export function problems(owners: Map<string, Owner>, use: TableUse, tables: string[]): string[] {
  const out: string[] = [];
  for (const table of tables) {
    if (!owners.has(table)) out.push(`${table}: not in the list`);
  }
  for (const table of owners.keys()) {
    if (!tables.includes(table)) out.push(`${table}: listed, but no table of src/db/schema.ts`);
  }
  for (const [table, files] of use.writers) {
    const owner = owners.get(table);
    for (const file of files) {
      if (owner?.writer !== file) out.push(`${table}: written by ${file}, not its store`);
    }
  }
  for (const [table, owner] of owners) {
    if (owner.writer !== "" && !use.writers.get(table)?.has(owner.writer)) {
      out.push(`${table}: its store ${owner.writer} does not write it`);
    }
    const found = use.readers.get(table) ?? new Set<string>();
    for (const file of found) {
      if (file !== owner.writer && !owner.readers.includes(file)) {
        out.push(`${table}: read by ${file}, which is not listed`);
      }
    }
    for (const file of owner.readers) {
      if (!found.has(file)) {
        out.push(`${table}: ${file} is listed as a reader but does not read it`);
      }
    }
  }
  return out;
}

Deno.test("each table is written by its one store and read only where DEVELOPERS.md says", () => {
  const owners = readOwners(Deno.readTextFileSync(`${ROOT}DEVELOPERS.md`));
  assert.deepEqual(problems(owners, tableUse(sourceFiles("src")), schemaTables()), []);
});

Deno.test("the table check reports a second writer, an unlisted reader and an unlisted table", () => {
  const owners = readOwners(
    "# x\n\n## Tables and their stores\n\n| table | store | readers |\n| --- | --- | --- |\n" +
      "| `token` | `src/domain/token/token_store.ts` | |\n## Next\n| `other` | `src/a.ts` | |\n",
  );
  assert.deepEqual([...owners.keys()], ["token"]);
  const use = tableUse({
    "src/domain/token/token_store.ts": 'db.insertInto("token").values(v); db.selectFrom("token")',
    "src/domain/validate/validate_store.ts": 'trx.deleteFrom("token").where("id", "=", id)',
    "src/domain/realm/realm_store.ts": 'db.selectFrom("token").select("id")',
  });
  assert.deepEqual(problems(owners, use, ["token", "audit"]), [
    "audit: not in the list",
    "token: written by src/domain/validate/validate_store.ts, not its store",
    "token: read by src/domain/realm/realm_store.ts, which is not listed",
  ]);
});
