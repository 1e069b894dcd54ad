/**
 * Attestation certificates for the WebAuthn `trusted` level tests, made
 * with the openssl CLI in a temporary directory: a root CA, an
 * intermediate CA it signs, an unrelated root, and P-256 attestation
 * certificates (version 3, OU=Authenticator Attestation, CA:FALSE) signed
 * by each. All are valid from 2020 to 2036, so both the fixed test clock
 * (2026-01-01) and the real time fall inside.
 *
 * @module
 */
import { X509Certificate } from "node:crypto";
import type { AttestationSigner } from "./_soft_authenticator.ts";

const CA_CONFIG = `[ ca ]
default_ca = test_ca
[ test_ca ]
database = ./index.txt
new_certs_dir = .
serial = ./serial
default_md = sha256
policy = any_name
unique_subject = no
[ any_name ]
countryName = optional
organizationName = optional
organizationalUnitName = optional
commonName = supplied
[ ca_ext ]
basicConstraints = critical,CA:TRUE
keyUsage = critical,keyCertSign,cRLSign
subjectKeyIdentifier = hash
[ attestation_ext ]
basicConstraints = critical,CA:FALSE
`;

/** The certificates of one test run; `close()` removes the directory. */
export interface AttestationPki {
  dir: string;
  /** PEM of the root CA the tests trust. */
  rootPem: string;
  /** PEM of a root CA that signs nothing of the tests (a second anchor in a bundle). */
  spareRootPem: string;
  /** Signed by the root directly: x5c = [leaf]. */
  direct: AttestationSigner;
  /** Signed by the intermediate: x5c = [leaf, intermediate]. */
  viaIntermediate: AttestationSigner;
  /** Signed by the unrelated root: x5c = [leaf]. */
  foreign: AttestationSigner;
  close(): Promise<void>;
}

async function openssl(args: string[], cwd: string): Promise<void> {
  const out = await new Deno.Command("openssl", { args, cwd, stdout: "piped", stderr: "piped" })
    .output();
  if (!out.success) {
    const text = new TextDecoder().decode(out.stderr) + new TextDecoder().decode(out.stdout);
    throw new Error(`openssl ${args.join(" ")} failed: ${text.trim().slice(0, 2000)}`);
  }
}

/** Makes the CAs and attestation certificates (openssl needed). */
export async function makeAttestationPki(): Promise<AttestationPki> {
  const dir = await Deno.makeTempDir({ prefix: "tessera-attestation-" });
  const ssl = (args: string[]) => openssl(args, dir);
  const dates = ["-startdate", "20200101000000Z", "-enddate", "20360101000000Z"];
  await Deno.writeTextFile(`${dir}/ca.cnf`, CA_CONFIG);
  await Deno.writeTextFile(`${dir}/index.txt`, "");
  await Deno.writeTextFile(`${dir}/serial`, "1000\n");
  const key = (name: string) =>
    ssl(["ecparam", "-name", "prime256v1", "-genkey", "-noout", "-out", `${name}.key`]);
  const csr = (name: string, subject: string) =>
    ssl(["req", "-new", "-key", `${name}.key`, "-subj", subject, "-out", `${name}.csr`]);
  const sign = (name: string, issuer: string | undefined, ext: string) =>
    ssl([
      "ca",
      "-batch",
      "-notext",
      "-config",
      "ca.cnf",
      ...(issuer ? ["-cert", `${issuer}.pem`, "-keyfile", `${issuer}.key`] : [
        "-selfsign",
        "-keyfile",
        `${name}.key`,
      ]),
      "-in",
      `${name}.csr`,
      "-out",
      `${name}.pem`,
      "-extensions",
      ext,
      ...dates,
    ]);
  const makeCa = async (name: string, cn: string, issuer?: string) => {
    await key(name);
    await csr(name, `/C=DE/O=Tessera Test/CN=${cn}`);
    await sign(name, issuer, "ca_ext");
  };
  const makeLeaf = async (name: string, issuer: string) => {
    await key(name);
    await csr(name, `/C=DE/O=Tessera Test/OU=Authenticator Attestation/CN=${name}`);
    await sign(name, issuer, "attestation_ext");
    await ssl(["pkcs8", "-topk8", "-nocrypt", "-in", `${name}.key`, "-out", `${name}.p8`]);
  };
  await makeCa("root", "Test Attestation Root");
  await makeCa("intermediate", "Test Attestation Intermediate", "root");
  await makeCa("foreign", "Foreign Attestation Root");
  await makeCa("spare", "Spare Attestation Root");
  await makeLeaf("direct", "root");
  await makeLeaf("deep", "intermediate");
  await makeLeaf("stranger", "foreign");
  const pem = (name: string) => Deno.readTextFile(`${dir}/${name}.pem`);
  const der = async (name: string) => new Uint8Array(new X509Certificate(await pem(name)).raw);
  const signer = async (name: string, chain: string[]): Promise<AttestationSigner> => {
    const p8 = (await Deno.readTextFile(`${dir}/${name}.p8`))
      .replace(/-----[A-Z ]+-----/g, "").replace(/\s+/g, "");
    const bytes = Uint8Array.from(atob(p8), (c) => c.charCodeAt(0));
    const privateKey = await crypto.subtle.importKey(
      "pkcs8",
      bytes,
      { name: "ECDSA", namedCurve: "P-256" },
      false,
      ["sign"],
    );
    return { key: privateKey, x5c: await Promise.all([name, ...chain].map(der)) };
  };
  return {
    dir,
    rootPem: await pem("root"),
    spareRootPem: await pem("spare"),
    direct: await signer("direct", []),
    viaIntermediate: await signer("deep", ["intermediate"]),
    foreign: await signer("stranger", []),
    close: () => Deno.remove(dir, { recursive: true }),
  };
}
