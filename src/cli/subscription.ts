/**
 * `tessera subscription keygen|sign`: lets an operator act as their own
 * subscription vendor (spec 06 §3.3) and lets tests produce valid files.
 *
 * @module
 */
import {
  generateVendorKeyPair,
  type SignatureFormat,
  signedMessage,
  signMessage,
  vendorKeyFileName,
} from "../domain/subscription/signature.ts";
import {
  parseSubscriptionFile,
  renderSubscriptionFile,
  signedValuesOf,
} from "../domain/subscription/file.ts";
import { AppError } from "../errors.ts";
import { nearest } from "./nearest.ts";

/** Help text of the `subscription` command. */
export const SUBSCRIPTION_HELP = `Usage: tessera subscription <keygen|sign> [options]

  subscription keygen --vendor <name> [--out <dir>] [--bits <1024..2048>]
      Creates an RSA key pair: <dir>/<name>.pem (public key, install it in
      subscriptions.key_dir of every Tessera node) and <dir>/<name>-private.pem
      (mode 0600, keep it off the servers). <dir> defaults to ".".
  subscription sign --key <private.pem> <file.yaml> [--out <file>] [--format pss|legacy]
      Signs a subscription draft (a YAML mapping of the 18 fields; an existing
      signature is replaced) and writes the signed file to --out or standard
      output. Its by_name must begin with the vendor name of the key pair.
      Format pss (default) is rsa_sha256_pss:<hex>; legacy is the decimal
      textbook-RSA form of older privacyIDEA files.`;

class CliUsageError extends Error {}

/** Runs `tessera subscription …`; returns the exit code. */
export async function runSubscriptionCommand(
  args: string[],
  flags: Map<string, string | true>,
): Promise<number> {
  try {
    const [action, ...rest] = args;
    if (action === "keygen") {
      if (rest.length > 0) throw new CliUsageError(`Unexpected argument "${rest[0]}"`);
      await keygen(flags);
    } else if (action === "sign") {
      if (rest.length !== 1) throw new CliUsageError("tessera subscription sign needs one file");
      await sign(rest[0], flags);
    } else if (action === undefined) {
      throw new CliUsageError("tessera subscription needs a command: keygen or sign");
    } else {
      const near = nearest(action, ["keygen", "sign"]);
      throw new CliUsageError(
        `Unknown subscription command "${action}"${near ? `; did you mean "${near}"?` : ""}`,
      );
    }
    return 0;
  } catch (err) {
    if (err instanceof CliUsageError) {
      console.error(`${err.message}\n\n${SUBSCRIPTION_HELP}`);
      return 2;
    }
    console.error(`Error: ${(err as Error).message}`);
    return 1;
  }
}

function flag(flags: Map<string, string | true>, name: string): string | undefined {
  const v = flags.get(name);
  return typeof v === "string" ? v : undefined;
}

async function keygen(flags: Map<string, string | true>): Promise<void> {
  const vendor = flag(flags, "vendor");
  if (!vendor) throw new CliUsageError("tessera subscription keygen needs --vendor <name>");
  if (vendorKeyFileName(vendor) !== `${vendor}.pem`) {
    throw new CliUsageError(
      `Cannot use vendor name "${vendor}": use one word of letters, digits, ".", "_" or "-"`,
    );
  }
  const bits = Number(flag(flags, "bits") ?? "2048");
  if (!Number.isInteger(bits) || bits < 1024 || bits > 2048) {
    // larger keys make signatures longer than the 640-character column
    throw new CliUsageError("--bits must be an integer from 1024 to 2048");
  }
  const dir = (flag(flags, "out") ?? ".").replace(/\/+$/, "") || "/";
  await Deno.mkdir(dir, { recursive: true });
  const publicPath = `${dir}/${vendor}.pem`;
  const privatePath = `${dir}/${vendor}-private.pem`;
  const { publicPem, privatePem } = generateVendorKeyPair(bits);
  // createNew: never overwrite an existing key
  await Deno.writeTextFile(privatePath, privatePem, { createNew: true, mode: 0o600 });
  await Deno.chmod(privatePath, 0o600);
  await Deno.writeTextFile(publicPath, publicPem, { createNew: true, mode: 0o644 });
  console.log(`Public key:  ${publicPath}  (copy to subscriptions.key_dir on every node)`);
  console.log(`Private key: ${privatePath}  (mode 0600; keep it off the servers)`);
}

async function sign(file: string, flags: Map<string, string | true>): Promise<void> {
  const keyPath = flag(flags, "key");
  if (!keyPath) throw new CliUsageError("tessera subscription sign needs --key <private.pem>");
  const format = (flag(flags, "format") ?? "pss") as SignatureFormat;
  if (format !== "pss" && format !== "legacy") {
    throw new CliUsageError('--format must be "pss" or "legacy"');
  }
  const privatePem = await Deno.readTextFile(keyPath);
  const text = await Deno.readTextFile(file);
  let parsed;
  try {
    parsed = parseSubscriptionFile(text, { unsigned: true });
  } catch (err) {
    if (err instanceof AppError) throw new Error(err.message);
    throw err;
  }
  if (!parsed.ok) throw new Error(`Cannot sign ${file}: ${parsed.reason}`);
  const values = signedValuesOf(parsed.data);
  const signature = await signMessage(privatePem, signedMessage(values), format);
  const signed = renderSubscriptionFile(values, signature);
  const out = flag(flags, "out");
  if (out) {
    await Deno.writeTextFile(out, signed);
    console.error(`Signed subscription for "${values.application}" written to ${out}`);
  } else {
    await Deno.stdout.write(new TextEncoder().encode(signed));
  }
}
