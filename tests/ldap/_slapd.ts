/**
 * A private OpenLDAP `slapd` for the LDAP tests: its own `slapd.conf`, schema
 * and MDB database in a temporary folder, seeded with `slapadd` from
 * `tests/fixtures/ldap_users.ldif`, listening on free loopback ports for
 * `ldap://` (StartTLS offered) and `ldaps://`, with a certificate signed by a
 * CA the helper makes with the openssl CLI (plus a second, unrelated CA for
 * "wrong CA" tests), and the dynlist overlay computing `memberOf` with nested
 * groups. Never the system service: slapd runs in the foreground
 * (`-d 0`) as a child of the test process and is stopped by its pid. As root
 * slapd simply runs as root (no `-u`/`-g`).
 *
 * Binaries come from Debian's `slapd` and `ldap-utils` packages
 * (`.ci/setup-extra` installs them). When they are missing, starting fails
 * with a message that says so: the tests fail, they are never skipped.
 *
 * @module
 */
import { existsSync } from "node:fs";
import { createServer, type Server, type Socket } from "node:net";
import { fileURLToPath } from "node:url";
import { terminate } from "../_process.ts";

/** Base DN of the test directory. */
export const BASE = "dc=example,dc=org";
/** The rootdn: may write everything (editable resolver tests). */
export const ADMIN_DN = `cn=admin,${BASE}`;
export const ADMIN_PW = "admin-secret";
/** A read-only service account (an entry of the fixture). */
export const READER_DN = `cn=reader,ou=services,${BASE}`;
export const READER_PW = "reader-secret";
/** Users of the fixture and their passwords. */
export const PASSWORDS: Readonly<Record<string, string>> = {
  alice: "alice-pw",
  bob: "bob-pw",
  "jürgen": "juergen-pw",
  jane: "jane-pw",
  carol: "carol-pw",
};

/** A running private slapd. */
export interface Slapd {
  /** `ldap://127.0.0.1:<port>` (plain, StartTLS offered). */
  url: string;
  /** `ldaps://127.0.0.1:<port>`. */
  ldapsUrl: string;
  dir: string;
  /** PEM of the CA that signed the server certificate. */
  caFile: string;
  /** PEM of a CA that did not sign it. */
  wrongCaFile: string;
  readonly pid: number;
  /** Stops slapd (SIGTERM, then SIGKILL) and removes the folder. */
  stop(): Promise<void>;
  /** The same, synchronously (process exit). */
  stopSync(): void;
}

const SLAPD_CANDIDATES = ["/usr/sbin/slapd", "/usr/local/libexec/slapd", "/usr/libexec/slapd"];
const FIXTURE = fileURLToPath(new URL("../fixtures/ldap_users.ldif", import.meta.url));

// Active Directory attributes on OpenLDAP (objectGUID with an equality rule so
// that a search by GUID works as on AD), in auxiliary classes the fixture uses
const AD_SCHEMA = `
attributetype ( 1.2.840.113556.1.4.2 NAME 'objectGUID'
  EQUALITY octetStringMatch SYNTAX 1.3.6.1.4.1.1466.115.121.1.40 SINGLE-VALUE )
attributetype ( 1.2.840.113556.1.4.221 NAME 'sAMAccountName'
  EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
  SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
attributetype ( 1.2.840.113556.1.4.656 NAME 'userPrincipalName'
  EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
  SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
attributetype ( 1.2.840.113556.1.4.619 NAME 'dNSHostName'
  EQUALITY caseIgnoreMatch SUBSTR caseIgnoreSubstringsMatch
  SYNTAX 1.3.6.1.4.1.1466.115.121.1.15 SINGLE-VALUE )
objectclass ( 1.3.6.1.4.1.4203.666.11.77.1 NAME 'tesseraAdAccount' AUXILIARY
  MAY ( objectGUID $ sAMAccountName $ userPrincipalName ) )
objectclass ( 1.3.6.1.4.1.4203.666.11.77.2 NAME 'tesseraComputer' AUXILIARY
  MAY ( objectGUID $ dNSHostName ) )
`;

/** Path of slapd, or undefined when OpenLDAP's server is not installed. */
export function slapdBinary(): string | undefined {
  for (const p of SLAPD_CANDIDATES) if (existsSync(p)) return p;
  for (const dir of (Deno.env.get("PATH") ?? "").split(":")) {
    if (dir && existsSync(`${dir}/slapd`)) return `${dir}/slapd`;
  }
  return undefined;
}

function toolOf(name: string, slapd: string): string {
  // slapadd is a link to slapd in the same folder (Debian: /usr/sbin)
  const beside = slapd.replace(/slapd$/, name);
  return existsSync(beside) ? beside : name;
}

async function run(cmd: string, args: string[], cwd?: string): Promise<void> {
  let out: Deno.CommandOutput;
  try {
    out = await new Deno.Command(cmd, { args, cwd, stdout: "piped", stderr: "piped" }).output();
  } catch (err) {
    throw new Error(`Cannot run ${cmd}: ${(err as Error).message}`);
  }
  if (!out.success) {
    const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    throw new Error(`${cmd} ${args.join(" ")} failed: ${text.trim().slice(0, 2000)}`);
  }
}

/** A free TCP port on 127.0.0.1 (nobody listens on it once returned). */
export async function freePort(): Promise<number> {
  return await new Promise((resolve, reject) => {
    const srv = createServer();
    srv.once("error", reject);
    srv.listen(0, "127.0.0.1", () => {
      const port = (srv.address() as { port: number }).port;
      srv.close(() => resolve(port));
    });
  });
}

/** Makes a CA, a server certificate for 127.0.0.1/localhost it signs, and an unrelated CA. */
async function makeCertificates(dir: string): Promise<void> {
  const ssl = (args: string[]) => run("openssl", args, dir);
  const days = ["-days", "2"];
  await ssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "ca.key",
    "-out",
    "ca.pem",
    ...days,
    "-subj",
    "/CN=Tessera Test CA",
  ]);
  await ssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "wrong-ca.key",
    "-out",
    "wrong-ca.pem",
    ...days,
    "-subj",
    "/CN=Some Other CA",
  ]);
  await ssl([
    "req",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    "server.key",
    "-out",
    "server.csr",
    "-subj",
    "/CN=localhost",
  ]);
  await Deno.writeTextFile(
    `${dir}/server.ext`,
    "subjectAltName=IP:127.0.0.1,DNS:localhost\nbasicConstraints=CA:FALSE\n" +
      "keyUsage=digitalSignature,keyEncipherment\nextendedKeyUsage=serverAuth\n",
  );
  await ssl([
    "x509",
    "-req",
    "-in",
    "server.csr",
    "-CA",
    "ca.pem",
    "-CAkey",
    "ca.key",
    "-CAcreateserial",
    "-out",
    "server.pem",
    ...days,
    "-extfile",
    "server.ext",
  ]);
}

async function canConnect(port: number): Promise<boolean> {
  try {
    const conn = await Deno.connect({ hostname: "127.0.0.1", port });
    conn.close();
    return true;
  } catch {
    return false;
  }
}

/**
 * Starts a private slapd seeded with the fixture (or `ldif`). Throws with a
 * clear message when slapd or openssl is missing or slapd does not start.
 */
export async function startSlapd(options: { ldif?: string } = {}): Promise<Slapd> {
  const slapd = slapdBinary();
  if (!slapd) {
    throw new Error(
      "OpenLDAP's slapd is not installed, so the LDAP tests cannot run: " +
        "apt-get install slapd ldap-utils (.ci/setup-extra does this without starting the service)",
    );
  }
  const dir = await Deno.makeTempDir({ prefix: "tessera-slapd-" });
  try {
    await makeCertificates(dir);
  } catch (err) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw new Error(
      `Cannot make the test certificates (openssl needed): ${(err as Error).message}`,
    );
  }
  await Deno.mkdir(`${dir}/db`);
  await Deno.writeTextFile(`${dir}/ad.schema`, AD_SCHEMA);
  await Deno.writeTextFile(
    `${dir}/slapd.conf`,
    [
      "include /etc/ldap/schema/core.schema",
      "include /etc/ldap/schema/cosine.schema",
      "include /etc/ldap/schema/inetorgperson.schema",
      "include /etc/ldap/schema/nis.schema",
      // groupOfURLs, which dynlist's memberOf rule names
      "include /etc/ldap/schema/dyngroup.schema",
      `include ${dir}/ad.schema`,
      `pidfile ${dir}/slapd.pid`,
      `argsfile ${dir}/slapd.args`,
      "modulepath /usr/lib/ldap",
      "moduleload back_mdb",
      "moduleload dynlist",
      `TLSCACertificateFile ${dir}/ca.pem`,
      `TLSCertificateFile ${dir}/server.pem`,
      `TLSCertificateKeyFile ${dir}/server.key`,
      "database mdb",
      `suffix "${BASE}"`,
      `rootdn "${ADMIN_DN}"`,
      `rootpw ${ADMIN_PW}`,
      `directory ${dir}/db`,
      "maxsize 67108864",
      "index objectClass eq",
      "access to attrs=userPassword",
      "  by anonymous auth",
      "  by * none",
      "access to *",
      "  by * read",
      // memberOf of an entry lists its groupOfNames groups, nested ones too (the trailing *):
      // OpenLDAP's way to nested groups, which the LDAP group search tests read
      "overlay dynlist",
      "dynlist-attrset groupOfURLs memberURL member+memberOf@groupOfNames*",
      "",
    ].join("\n"),
  );
  const ldif = options.ldif ?? FIXTURE;
  try {
    await run(toolOf("slapadd", slapd), ["-f", `${dir}/slapd.conf`, "-l", ldif]);
  } catch (err) {
    await Deno.remove(dir, { recursive: true }).catch(() => {});
    throw err;
  }
  const port = await freePort();
  const ldapsPort = await freePort();
  const url = `ldap://127.0.0.1:${port}`;
  const ldapsUrl = `ldaps://127.0.0.1:${ldapsPort}`;
  // -d 0: stay in the foreground (a child of this process, stopped by pid), no debug output
  let child: Deno.ChildProcess | undefined = new Deno.Command(slapd, {
    args: ["-f", `${dir}/slapd.conf`, "-h", `${url}/ ${ldapsUrl}/`, "-d", "0"],
    stdin: "null",
    stdout: "null",
    stderr: "piped",
  }).spawn();
  const pid = child.pid;
  let stderr = "";
  const drained = (async () => {
    for await (const chunk of child!.stderr.pipeThrough(new TextDecoderStream())) {
      if (stderr.length < 20_000) stderr += chunk;
    }
  })().catch(() => {});

  const stop = async () => {
    const running = child;
    child = undefined;
    if (running) {
      await terminate(running);
      await drained;
    }
    await Deno.remove(dir, { recursive: true }).catch(() => {});
  };
  const stopSync = () => {
    const running = child;
    child = undefined;
    if (running) {
      try {
        Deno.kill(pid, "SIGKILL");
      } catch { /* gone */ }
    }
    try {
      Deno.removeSync(dir, { recursive: true });
    } catch { /* gone */ }
  };
  const deadline = Date.now() + 20_000;
  let exited = false;
  child.status.then(() => exited = true);
  while (!(await canConnect(port)) || !(await canConnect(ldapsPort))) {
    if (exited || Date.now() > deadline) {
      await stop();
      throw new Error(`slapd did not start: ${stderr.trim().slice(0, 2000)}`);
    }
    await new Promise((r) => setTimeout(r, 50));
  }
  return {
    url,
    ldapsUrl,
    dir,
    caFile: `${dir}/ca.pem`,
    wrongCaFile: `${dir}/wrong-ca.pem`,
    get pid() {
      return child?.pid ?? 0;
    },
    stop,
    stopSync,
  };
}

let shared: Promise<Slapd> | undefined;

/**
 * The slapd of this test file, started on first use and stopped after the
 * file's last test (`Deno.test.afterAll`) or, failing that, when the process
 * exits. Tests that use it must switch off Deno's op/resource sanitizers
 * (the server outlives a single test): see {@link ldapTest}.
 */
export function sharedSlapd(): Promise<Slapd> {
  if (shared === undefined) {
    shared = startSlapd();
    shared.then((s) => globalThis.addEventListener("unload", () => s.stopSync())).catch(() => {});
  }
  return shared;
}

Deno.test.afterAll(async () => {
  if (shared === undefined) return;
  const s = await shared.catch(() => undefined);
  shared = undefined;
  await s?.stop();
});

/** `Deno.test` for tests against the shared slapd (sanitizers off: slapd spans tests). */
export function ldapTest(name: string, fn: (slapd: Slapd) => Promise<void>): void {
  Deno.test({
    name,
    sanitizeOps: false,
    sanitizeResources: false,
    fn: async () => fn(await sharedSlapd()),
  });
}

/**
 * A TCP listener that accepts connections and never answers (an LDAP server
 * that hangs), counting them. Closed with `close()`.
 */
export async function silentListener(): Promise<
  { url: string; readonly connections: number; close(): Promise<void> }
> {
  const sockets = new Set<Socket>();
  let connections = 0;
  const server: Server = createServer((s) => {
    connections++;
    sockets.add(s);
    s.on("error", () => {});
    s.on("close", () => sockets.delete(s));
  });
  await new Promise<void>((resolve, reject) => {
    server.once("error", reject);
    server.listen(0, "127.0.0.1", () => resolve());
  });
  const port = (server.address() as { port: number }).port;
  return {
    url: `ldap://127.0.0.1:${port}`,
    /** Connections accepted so far. */
    get connections() {
      return connections;
    },
    async close() {
      for (const s of sockets) s.destroy();
      await new Promise<void>((resolve) => server.close(() => resolve()));
    },
  };
}
