/**
 * `tessera import privacyidea`: migrates a privacyIDEA database (spec 12),
 * with a progress bar on a terminal and a summary table at the end.
 *
 * @module
 */
import { hostname } from "node:os";
import { Migrator } from "kysely/migration";
import type { Config } from "../config.ts";
import type { Deps } from "../deps.ts";
import type { Db } from "../db/schema.ts";
import type { Logger } from "../lib/logger.ts";
import { AppError } from "../errors.ts";
import { closeRuntime, openRuntime } from "../runtime.ts";
import { migrateToLatest, openDatabase } from "../db/database.ts";
import { sqliteFileOf } from "../db/backup.ts";
import { MIGRATIONS } from "../db/migrations/mod.ts";
import { AuditWriter } from "../domain/audit/mod.ts";
import { checkKeyFile, KeyMismatchError, keysFromKeyFile } from "../domain/keys/mod.ts";
import { systemClock } from "../lib/clock.ts";
import { KEY_FILE_LENGTH, readKeyFile } from "../lib/key_file.ts";
import { secureRandom } from "../lib/random.ts";
import { GPG_KEY_HELP, runGpgKeyCommand } from "./gpg_key.ts";
import {
  type PiImportOptions,
  type PiImportReport,
  readPrivacyidea,
  writePrivacyidea,
} from "../domain/import/mod.ts";

/** Help text of the `import` command. */
export const IMPORT_HELP =
  `Usage: tessera import privacyidea --database <url> --enckey <file> [options]
       tessera import privacyidea --database-file <file> --enckey <file> [options]

Copies a privacyIDEA installation into Tessera's database in one transaction:
tokens (secrets re-encrypted under Tessera's key, counters, fail counters,
flags, tokeninfo, owners, realms, PIN hashes), resolvers, realms, system
config, policies, event handlers, machine resolvers and machine tokens,
RADIUS and SMTP servers, local admins with their password hashes. Objects
that exist already are reported and left alone, so running it again changes
nothing. A database that is not privacyIDEA's, or a key file that does not
decrypt it, stops it before anything is created or written.

A policy naming an action Tessera does not have is not imported at all (never
in part): the output names it with those actions, the rest is imported, and
the command exits with code 3 (also when a policy fails for another reason, when
any other object is left out — the summary's "failed" column —, or on a dry run
that would leave one out). Exit codes: 0 done, 1 error (nothing written),
2 usage, 3 done but something left out.

  --database <url>             privacyIDEA's database, as pi.cfg's SQLALCHEMY_DATABASE_URI
                               has it: sqlite:////var/lib/privacyidea/pi.sqlite,
                               postgresql://user:pw@host/db, or
                               mysql+pymysql://user:pw@host[:port]/db (also mysql://,
                               mariadb://; ?unix_socket=, ssl_ca=, ssl_cert=, ssl_key=,
                               ssl_check_hostname=, connect_timeout=, charset=utf8);
                               read in one read-only transaction, never written
  --database-file <file>       first line: the database URL (keeps its password off the
                               command line, which other users of the host can list)
  --enckey <file>              privacyIDEA's PI_ENCFILE (96 bytes, or password-protected)
  --enckey-password-file <f>   first line: the password of a password-protected key file
  --pepper-file <file>         first line: PI_PEPPER (admin password hashes); default "missing"
  --dry-run                    only print what would be imported; creates and
                               changes nothing (no data directory, key file,
                               database or migration)
  --replace                    replace tokens whose serial exists (default: skip them)

${GPG_KEY_HELP}`;

class ImportUsageError extends Error {}

/** Exit code of an import that left out policies or other objects (the rest was imported). */
export const EXIT_POLICIES_LEFT_OUT = 3;

/** Objects of the source that the import leaves out (a summary row's `failed`), policies too. */
function leftOutCount(report: PiImportReport): number {
  return report.summary.reduce((n, r) => n + r.failed, 0);
}

/**
 * The exit code of a finished import: {@link EXIT_POLICIES_LEFT_OUT} when anything was left
 * out (a script that reads only the exit code must not miss an object that did not arrive).
 */
function exitCodeOf(report: PiImportReport): number {
  return report.policiesNotImported.length > 0 || leftOutCount(report) > 0
    ? EXIT_POLICIES_LEFT_OUT
    : 0;
}

/** A dry run that cannot compare with Tessera's database without changing it. */
class DryRunError extends Error {}

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

/** The source and the options of `import privacyidea`, from its flags (reads the files). */
async function importInput(
  flags: Map<string, string | true>,
): Promise<{ database: string; options: PiImportOptions }> {
  const encKeyPasswordFile = flags.get("enckey-password-file");
  const pepperFile = flags.get("pepper-file");
  const databaseFile = flags.get("database-file");
  return {
    database: typeof databaseFile === "string"
      ? (await firstLine(databaseFile)).trim()
      : flags.get("database") as string,
    options: {
      encKey: await Deno.readFile(flags.get("enckey") as string),
      encKeyPassword: typeof encKeyPasswordFile === "string"
        ? await firstLine(encKeyPasswordFile)
        : undefined,
      pepper: typeof pepperFile === "string" ? await firstLine(pepperFile) : undefined,
      dryRun: flags.has("dry-run"),
      replace: flags.has("replace"),
    },
  };
}

function printReport(report: PiImportReport, out: ImportOutput): void {
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
  const others = leftOutCount(report) - report.policiesNotImported.length;
  if (others > 0) {
    out.line(
      `${report.isDryRun ? "Would leave out" : "Left out"} ${others} other ` +
        `${others === 1 ? "object" : "objects"} (the "failed" column): see above; ` +
        `exit code ${EXIT_POLICIES_LEFT_OUT}.`,
    );
  }
  if (report.policiesNotImported.length > 0) {
    out.line(
      `${report.isDryRun ? "Would leave out" : "Left out"} ${report.policiesNotImported.length} ` +
        `${report.policiesNotImported.length === 1 ? "policy" : "policies"} ` +
        `(${report.policiesNotImported.join(", ")}): see above; ` +
        `exit code ${EXIT_POLICIES_LEFT_OUT}.`,
    );
  }
}

/** Runs `import privacyidea` on open deps; returns the exit code. */
export async function importCommand(
  deps: Deps,
  flags: Map<string, string | true>,
  out: ImportOutput,
): Promise<number> {
  const { database, options } = await importInput(flags);
  const snapshot = await readPrivacyidea(database, options);
  const report = await writePrivacyidea(deps, snapshot, { ...options, onProgress: out.progress });
  printReport(report, out);
  return exitCodeOf(report);
}

/** Applied and pending migrations of `db`, read without creating the migration table. */
async function migrationState(db: Db): Promise<{ applied: number; pending: string[] }> {
  const migrator = new Migrator({
    db,
    provider: { getMigrations: () => Promise.resolve(MIGRATIONS) },
  });
  const all = await migrator.getMigrations();
  return {
    applied: all.filter((m) => m.executedAt !== undefined).length,
    pending: all.filter((m) => m.executedAt === undefined).map((m) => m.name),
  };
}

/**
 * Deps for a dry run, which creates and changes nothing: Tessera's database is only read, and
 * only when it exists and is migrated (with the key file it records, which decrypts its
 * configuration); where there is none yet (no file, or a database never migrated) an empty
 * in-memory one stands for it. Without a key file the keys are throwaway ones: nothing the dry
 * run encrypts or hashes is kept, and no key file is created.
 */
async function openDryRun(config: Config, log: Logger): Promise<Deps> {
  const url = config.storage.databaseUrl;
  const file = sqliteFileOf(url);
  const isAbsent = file !== undefined && !await Deno.stat(file).then(() => true, () => false);
  let db = openDatabase(isAbsent ? ":memory:" : url);
  const state = await migrationState(db).catch(async (err) => {
    await db.destroy();
    throw err;
  });
  if (state.applied === 0) {
    if (!isAbsent) {
      await db.destroy();
      db = openDatabase(":memory:");
    }
    await migrateToLatest(db);
  } else if (state.pending.length > 0) {
    await db.destroy();
    throw new DryRunError(
      `Tessera's database needs ${state.pending.length} migrations (tessera migrate); a dry run ` +
        "compares with it but does not change it",
    );
  } else {
    await checkKeyFile(db, config.storage.keyFile).catch(async (err) => {
      await db.destroy();
      throw err;
    });
  }
  return {
    config,
    db,
    clock: systemClock,
    random: secureRandom,
    keys: keysFromKeyFile(
      readKeyFile(config.storage.keyFile) ?? secureRandom.bytes(KEY_FILE_LENGTH),
    ),
    log,
    audit: new AuditWriter(db, log),
    nodeName: config.server.nodeName || hostname(),
  };
}

function checkArgs(args: string[], flags: Map<string, string | true>): void {
  if (args[0] !== "privacyidea" || args.length !== 1) {
    throw new ImportUsageError(
      `Unknown import source "${args.join(" ")}"; expected privacyidea or gpgkey`,
    );
  }
  if (flags.has("database") === flags.has("database-file")) {
    throw new ImportUsageError(
      "tessera import privacyidea needs --database or --database-file (one of them)",
    );
  }
  if (typeof flags.get("enckey") !== "string") {
    throw new ImportUsageError("tessera import privacyidea needs --enckey");
  }
  if (flags.has("passphrase-file")) {
    throw new ImportUsageError("--passphrase-file is an option of tessera import gpgkey");
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
  // an operator's OpenPGP key for encrypted token files (privacyIDEA's PI_GNUPG_HOME)
  if (args[0] === "gpgkey") return await runGpgKeyCommand(config, log, args.slice(1), flags);
  try {
    checkArgs(args, flags);
  } catch (err) {
    console.error(`${(err as Error).message}\n\n${IMPORT_HELP}`);
    return 2;
  }
  let deps: Deps | undefined;
  try {
    const { database, options } = await importInput(flags);
    // the source is read and checked before anything of Tessera's is created or opened
    const snapshot = await readPrivacyidea(database, options);
    deps = options.dryRun ? await openDryRun(config, log) : await openRuntime(config, log);
    const report = await writePrivacyidea(deps, snapshot, {
      ...options,
      onProgress: terminalProgress(),
    });
    printReport(report, { line: (text) => console.log(text) });
    return exitCodeOf(report);
  } catch (err) {
    if (
      err instanceof AppError || err instanceof Deno.errors.NotFound ||
      err instanceof DryRunError || err instanceof KeyMismatchError
    ) {
      console.error(`Error: ${(err as Error).message}`);
      return 1;
    }
    throw err;
  } finally {
    if (deps) await closeRuntime(deps);
  }
}
