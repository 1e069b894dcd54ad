/**
 * A throw-away CA directory as privacyIDEA's local CA keeps one (spec 14 §1.9):
 * `cakey.pem` and `cacert.pem` made by the openssl binary, an empty
 * `index.txt`, `serial` holding 1000, and a templates file. Also runs openssl
 * for the tests' independent checks (PKCS#12, CRLs).
 *
 * @module
 */
import { jsonOf, type TestApp } from "../test_app.ts";

/** Runs the openssl binary; returns stdout+stderr, throws when it fails. */
export async function openssl(args: string[], stdin?: Uint8Array): Promise<string> {
  const child = new Deno.Command("openssl", {
    args,
    stdin: stdin ? "piped" : "null",
    stdout: "piped",
    stderr: "piped",
  }).spawn();
  if (stdin) {
    const w = child.stdin.getWriter();
    await w.write(stdin);
    await w.close();
  }
  const out = await child.output();
  const text = new TextDecoder().decode(out.stdout) + new TextDecoder().decode(out.stderr);
  if (!out.success) throw new Error(`openssl ${args.join(" ")} failed: ${text}`);
  return text;
}

/** The paths of a CA directory. */
export interface CaDir {
  dir: string;
  cakey: string;
  cacert: string;
  remove(): Promise<void>;
}

/** The templates file the tests use (privacyIDEA's tests/testdata/ca/templates.yaml). */
export const TEMPLATES_YAML = 'user:\n  days: 365\n  extensions: "user"\n' +
  'webserver:\n  days: 750\n  extensions: "server"\ntemplate3:\n  days: 10\n  extensions: "user"\n';

/** Makes a CA directory with `openssl req -x509` (CN=TestCA unless `cn` says otherwise). */
export async function makeCaDir(options: { cn?: string; serial?: string; index?: string } = {}) {
  const dir = await Deno.makeTempDir({ prefix: "tessera-ca-" });
  await openssl([
    "req",
    "-x509",
    "-newkey",
    "rsa:2048",
    "-nodes",
    "-keyout",
    `${dir}/cakey.pem`,
    "-out",
    `${dir}/cacert.pem`,
    "-subj",
    `/CN=${options.cn ?? "TestCA"}`,
    "-days",
    "30",
  ]);
  await Deno.writeTextFile(`${dir}/index.txt`, options.index ?? "");
  await Deno.writeTextFile(`${dir}/serial`, `${options.serial ?? "1000"}\n`);
  await Deno.writeTextFile(`${dir}/templates.yaml`, TEMPLATES_YAML);
  return {
    dir,
    cakey: `${dir}/cakey.pem`,
    cacert: `${dir}/cacert.pem`,
    remove: () => Deno.remove(dir, { recursive: true }),
  } satisfies CaDir;
}

/** `POST /caconnector/<name>` for the CA directory (as privacyIDEA's setup writes it); throws unless 200. */
export async function createCaConnector(t: TestApp, name: string, ca: CaDir): Promise<number> {
  const res = await jsonOf(
    await t.asAdmin("POST", `/caconnector/${name}`, {
      body: {
        type: "local",
        cakey: ca.cakey,
        cacert: ca.cacert,
        WorkingDir: ca.dir,
        CSRDir: "",
        CertificateDir: "",
        CRL: "crl.pem",
        CRL_Validity_Period: "30",
        CRL_Overlap_Period: "5",
        templates: "templates.yaml",
        "openssl.cnf": `${ca.dir}/openssl.cnf`,
      },
    }),
  );
  if (res.status !== 200) throw new Error(`caconnector ${name}: ${JSON.stringify(res.body)}`);
  return res.body.result.value;
}
