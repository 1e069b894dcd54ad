/**
 * `tessera import privacyidea`: migrates a privacyIDEA database (spec 12),
 * with a progress bar on a terminal and a summary table at the end.
 *
 * @module
 */
import type { Config } from "../config.ts";
import type { Deps } from "../deps.ts";
import type { Logger } from "../lib/logger.ts";
import { AppError } from "../errors.ts";
import { closeRuntime, openRuntime } from "../runtime.ts";
import { importPrivacyidea, type PiImportReport } from "../domain/import/mod.ts";

/** Help text of the `import` command. */
export const IMPORT_HELP =
  `Usage: tessera import privacyidea --database <url> --enckey <file> [options]

Copies a privacyIDEA installation into Tessera's database in one transaction:
tokens (secrets re-encrypted under Tessera's key, counters, fail counters,
flags, tokeninfo, owners, realms, PIN hashes), resolvers, realms, system
config, policies, event handlers, machine resolvers and machine tokens,
RADIUS and SMTP servers, local admins with their password hashes. Objects
that exist already are reported and left alone, so running it again changes
nothing. A key file that does not decrypt the database stops it before
anything is written.

  --database <url>             sqlite:////var/lib/privacyidea/pi.sqlite (SQLAlchemy form),
                               sqlite:<path>, or postgresql://user:pw@host/db
                               (MySQL/MariaDB: not yet; copy the data to PostgreSQL first)
  --enckey <file>              privacyIDEA's PI_ENCFILE (96 bytes, or password-protected)
  --enckey-password-file <f>   first line: the password of a password-protected key file
  --pepper-file <file>         first line: PI_PEPPER (admin password hashes); default "missing"
  --dry-run                    only print what would be imported
  --replace                    replace tokens whose serial exists (default: skip them)`;

class ImportUsageError extends Error {}

async function firstLine(path: string): Promise<string> {
  return (await Deno.readTextFile(path)).split(/\r?\n/)[0];
}

/** Output of {@link importCommand}: lines, and a progress bar where there is a terminal. */
export interface ImportOutput {
  line(text: string): void;
  /** Redraws the progress bar; undefined when the output is no terminal. */
  progress?(done: number, total: number): void;
}

/** The summary table of a report. */
export function summaryTable(report: PiImportReport): string[] {
  const head = ["", "found", report.isDryRun ? "would import" : "imported", "existing", "failed"];
  const rows = report.summary.map((r) => [
    r.what,
    String(r.found),
    String(r.imported),
    String(r.existing),
    String(r.failed),
  ]);
  const widths = head.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i].length)));
  const fmt = (cells: string[]) =>
    cells.map((c, i) => i === 0 ? c.padEnd(widths[i]) : c.padStart(widths[i])).join("  ");
  return [fmt(head), ...rows.map(fmt)];
}

/** Runs `import privacyidea` on open deps; returns the exit code. */
export async function importCommand(
  deps: Deps,
  flags: Map<string, string | true>,
  out: ImportOutput,
): Promise<number> {
  const database = flags.get("database");
  const encKeyPath = flags.get("enckey");
  const encKeyPasswordFile = flags.get("enckey-password-file");
  const pepperFile = flags.get("pepper-file");
  const report = await importPrivacyidea(deps, database as string, {
    encKey: await Deno.readFile(encKeyPath as string),
    encKeyPassword: typeof encKeyPasswordFile === "string"
      ? await firstLine(encKeyPasswordFile)
      : undefined,
    pepper: typeof pepperFile === "string" ? await firstLine(pepperFile) : undefined,
    dryRun: flags.has("dry-run"),
    replace: flags.has("replace"),
    onProgress: out.progress,
  });
  if (report.isDryRun) out.line("Dry run: nothing was written.");
  for (const l of report.log) out.line(l);
  out.line("");
  for (const l of summaryTable(report)) out.line(l);
  if (!report.isDryRun) {
    out.line("");
    out.line(
      report.changed === 0
        ? "Nothing changed."
        : `Imported ${report.changed} objects in one transaction.`,
    );
  }
  return 0;
}

function checkArgs(args: string[], flags: Map<string, string | true>): void {
  if (args[0] !== "privacyidea" || args.length !== 1) {
    throw new ImportUsageError(`Unknown import source "${args.join(" ")}"; expected privacyidea`);
  }
  for (const f of ["database", "enckey"]) {
    if (typeof flags.get(f) !== "string") {
      throw new ImportUsageError(`tessera import privacyidea needs --${f}`);
    }
  }
}

function terminalProgress(): ImportOutput["progress"] {
  if (!Deno.stderr.isTerminal()) return undefined;
  const enc = new TextEncoder();
  return (done, total) => {
    const width = 30;
    const filled = total === 0 ? width : Math.round((done / total) * width);
    const bar = "#".repeat(filled) + ".".repeat(width - filled);
    Deno.stderr.writeSync(enc.encode(`\r[${bar}] ${done}/${total} tokens`));
    if (done === total) Deno.stderr.writeSync(enc.encode("\n"));
  };
}

/** `tessera import …`; returns the exit code. */
export async function runImportCommand(
  config: Config,
  log: Logger,
  args: string[],
  flags: Map<string, string | true>,
): Promise<number> {
  try {
    checkArgs(args, flags);
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${IMPORT_HELP}`);
    return 2;
  }
  const deps = await openRuntime(config, log);
  try {
    return await importCommand(deps, flags, {
      line: (text) => console.log(text),
      progress: terminalProgress(),
    });
  } catch (err) {
    if (err instanceof AppError || err instanceof Deno.errors.NotFound) {
      console.error(`Error: ${(err as Error).message}`);
      return 1;
    }
    throw err;
  } finally {
    await closeRuntime(deps);
  }
}
