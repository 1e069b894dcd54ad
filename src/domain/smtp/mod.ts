/**
 * SMTP server definitions (`/smtpserver/`) and mail delivery through them.
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { missingParameter, ParameterError, ResourceNotFoundError } from "../../errors.ts";
import { CENSORED, decryptSecretText, encryptSecret } from "../../lib/crypto.ts";
import { toHex } from "../../lib/random.ts";
import { refuseMovedSecrets } from "../secret_targets/mod.ts";
import * as store from "./smtp_store.ts";
import { type MailMessage, sendSmtp, type SmtpSettings } from "./smtp_client.ts";

export { SmtpError } from "./smtp_client.ts";

// no control characters, no path separators
// deno-lint-ignore no-control-regex
const IDENTIFIER_REGEXP = /^[^\x00-\x1f/\\]{1,255}$/;
const EMAIL_REGEXP = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;
/** The keys that decide where a definition's password is sent. */
const SECRET_TARGETS = { password: ["server", "port"] } as const;

/** An SMTP server as `GET /smtpserver/` shows it (password censored). */
export interface SmtpServerView {
  id: number;
  identifier: string;
  server: string;
  port: number;
  tls: boolean;
  username: string;
  password: string;
  sender: string;
  description: string;
  timeout: number;
  enqueue_job: boolean;
}

function str(params: Record<string, unknown>, name: string, fallback = ""): string {
  const v = params[name];
  if (v === undefined || v === null) return fallback;
  if (typeof v === "string") return v;
  if (typeof v === "number" || typeof v === "boolean") return String(v);
  throw new ParameterError(`Cannot parse parameter "${name}": expected a string`);
}

function int(params: Record<string, unknown>, name: string, fallback: number, max: number): number {
  const s = str(params, name).trim();
  if (s === "") return fallback;
  if (!/^\d+$/.test(s) || Number(s) > max) {
    throw new ParameterError(
      `Cannot parse parameter "${name}": expected an integer from 0 to ${max}, got "${s}"`,
    );
  }
  return Number(s);
}

function bool(params: Record<string, unknown>, name: string): boolean {
  const s = str(params, name).trim().toLowerCase();
  if (["1", "true", "yes", "on"].includes(s)) return true;
  if (["0", "false", "no", "off", ""].includes(s)) return false;
  throw new ParameterError(`Cannot parse parameter "${name}": expected a boolean, got "${s}"`);
}

/** Checks an identifier (it is also used in messages and option values). */
export function checkIdentifier(identifier: string): string {
  if (!IDENTIFIER_REGEXP.test(identifier)) {
    throw new ParameterError(`Cannot use SMTP server identifier "${identifier.slice(0, 50)}"`);
  }
  return identifier;
}

function view(row: store.SmtpRow): SmtpServerView {
  return {
    id: row.id,
    identifier: row.identifier,
    server: row.server,
    port: row.port,
    tls: row.tls,
    username: row.username,
    password: row.password ? CENSORED : "",
    sender: row.sender,
    description: row.description,
    timeout: row.timeout,
    enqueue_job: row.enqueueJob,
  };
}

async function settingsFrom(
  deps: Deps,
  identifier: string | undefined,
  params: Record<string, unknown>,
): Promise<Omit<store.SmtpRow, "id">> {
  const server = str(params, "server").trim();
  if (!server) throw missingParameter("server");
  if (server.length > 255 || /[\s/]/.test(server)) {
    throw new ParameterError(`Cannot parse parameter "server": invalid host name "${server}"`);
  }
  const sender = str(params, "sender").trim();
  if (sender && !EMAIL_REGEXP.test(sender.replace(/^.*<([^>]*)>\s*$/, "$1"))) {
    throw new ParameterError(`Cannot parse parameter "sender": invalid address "${sender}"`);
  }
  const port = int(params, "port", 25, 65535);
  let password = str(params, "password");
  if (password === CENSORED) {
    // the censored placeholder sent back keeps the stored password, for the same server only
    const existing = identifier ? (await store.listServers(deps.db, identifier))[0] : undefined;
    if (existing) {
      refuseMovedSecrets(
        SECRET_TARGETS,
        { password: existing.password, server: existing.server, port: String(existing.port) },
        { server, port: String(port) },
        () => true,
      );
    }
    password = existing?.password ?? "";
  } else if (password !== "") {
    password = encryptSecret(deps.keys.config, password, deps.random);
  }
  const timeout = int(params, "timeout", 10, 600);
  return {
    identifier: identifier ?? "",
    server,
    port,
    tls: bool(params, "tls"),
    username: str(params, "username"),
    password,
    sender,
    description: str(params, "description").slice(0, 2000),
    timeout: timeout === 0 ? 10 : timeout,
    enqueueJob: bool(params, "enqueue_job"),
  };
}

/** `POST /smtpserver/<identifier>`: creates or replaces a definition; returns its id. */
export async function saveSmtpServer(
  deps: Deps,
  identifier: string,
  params: Record<string, unknown>,
): Promise<number> {
  checkIdentifier(identifier);
  return await store.upsertServer(deps.db, await settingsFrom(deps, identifier, params));
}

/** `GET /smtpserver/[<identifier>]`: identifier → definition (password censored). */
export async function listSmtpServers(
  deps: Deps,
  identifier?: string,
): Promise<Record<string, SmtpServerView>> {
  const rows = await store.listServers(deps.db, identifier);
  return Object.fromEntries(rows.map((r) => [r.identifier, view(r)]));
}

/** The identifiers of every definition (for option lists). */
export async function smtpServerIds(deps: Deps): Promise<string[]> {
  return (await store.listServers(deps.db)).map((r) => r.identifier);
}

/** `DELETE /smtpserver/<identifier>`: returns the deleted id. */
export async function deleteSmtpServer(deps: Deps, identifier: string): Promise<number> {
  const id = await store.deleteServer(deps.db, identifier);
  if (id === undefined) {
    throw new ResourceNotFoundError("The requested SMTP server could not be found.");
  }
  return id;
}

function clientSettings(deps: Deps, row: Omit<store.SmtpRow, "id">): SmtpSettings {
  return {
    server: row.server,
    port: row.port,
    tls: row.tls,
    username: row.username,
    password: row.password ? decryptSecretText(deps.keys.config, row.password) : "",
    timeout: row.timeout,
  };
}

/** A mail to send through a definition. */
export interface Mail {
  to: string[];
  subject: string;
  body: string;
  html?: boolean;
  replyTo?: string;
}

function message(deps: Deps, sender: string, mail: Mail): MailMessage {
  return {
    from: sender || "tessera@localhost",
    to: mail.to,
    subject: mail.subject,
    body: mail.body,
    html: mail.html,
    replyTo: mail.replyTo,
    date: deps.clock.now(),
    messageId: toHex(deps.random.bytes(12)),
  };
}

/**
 * Sends `mail` through the definition `identifier`. Throws ResourceNotFoundError
 * for an unknown identifier and SmtpError when delivery fails.
 */
export async function sendMail(deps: Deps, identifier: string, mail: Mail): Promise<void> {
  const row = (await store.listServers(deps.db, identifier))[0];
  if (!row) throw new ResourceNotFoundError("The requested SMTP server could not be found.");
  await sendSmtp(clientSettings(deps, row), message(deps, row.sender, mail));
}

/**
 * `POST /smtpserver/send_test_email`: sends a test mail with the given settings
 * (a censored password uses the stored one). True when the server accepted it.
 */
export async function sendTestEmail(deps: Deps, params: Record<string, unknown>): Promise<boolean> {
  const identifier = str(params, "identifier").trim();
  if (!identifier) throw missingParameter("identifier");
  checkIdentifier(identifier);
  const recipient = str(params, "recipient").trim();
  if (!recipient) throw missingParameter("recipient");
  if (!EMAIL_REGEXP.test(recipient)) {
    throw new ParameterError(`Cannot parse parameter "recipient": invalid address "${recipient}"`);
  }
  const row = await settingsFrom(deps, identifier, params);
  try {
    await sendSmtp(
      clientSettings(deps, row),
      message(deps, row.sender, {
        to: [recipient],
        subject: `Your TEST email from Tessera (${identifier})`,
        body: "This is a test email from Tessera. The configuration is working.",
      }),
    );
    return true;
  } catch (err) {
    deps.log.warn("Test email failed", { identifier, error: (err as Error).message });
    return false;
  }
}

/** An SMTP server given by the request itself (`POST /system/test/email`), not a definition. */
export interface AdhocSmtp {
  server: string;
  port: number;
  tls: boolean;
  username: string;
  password: string;
  sender: string;
}

/** Sends `mail` through `smtp`; true when the server accepted it (the failure goes to the log). */
export async function sendAdhocMail(deps: Deps, smtp: AdhocSmtp, mail: Mail): Promise<boolean> {
  if (!EMAIL_REGEXP.test(smtp.sender.replace(/^.*<([^>]*)>\s*$/, "$1"))) {
    throw new ParameterError(`Cannot parse parameter "email.mailfrom": invalid address`);
  }
  for (const to of mail.to) {
    if (!EMAIL_REGEXP.test(to)) {
      throw new ParameterError(`Cannot parse parameter "email.recipient": invalid address`);
    }
  }
  const settings: SmtpSettings = { ...smtp, timeout: 10 };
  try {
    await sendSmtp(settings, message(deps, smtp.sender, mail));
    return true;
  } catch (err) {
    deps.log.warn("Test email failed", { server: smtp.server, error: (err as Error).message });
    return false;
  }
}
