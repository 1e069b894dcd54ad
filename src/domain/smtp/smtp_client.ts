/**
 * A small SMTP client (RFC 5321) over `Deno.connect`: EHLO, STARTTLS or
 * implicit TLS (port 465), AUTH PLAIN/LOGIN, one message with UTF-8 text in
 * base64. Enough for notifications, no dependency, works in `deno compile`.
 *
 * @module
 */

/** Where and how to deliver. */
export interface SmtpSettings {
  server: string;
  port: number;
  /** Require STARTTLS (port 465 always uses implicit TLS). */
  tls: boolean;
  username: string;
  password: string;
  /** Seconds for the whole conversation. */
  timeout: number;
  /** CA certificates (PEM) to trust in addition to the system store (tests). */
  caCerts?: string[];
}

/** One message. */
export interface MailMessage {
  from: string;
  to: string[];
  subject: string;
  body: string;
  html?: boolean;
  replyTo?: string;
  /** `Date` header time (ms). */
  date: number;
  /** Unique part of the Message-ID. */
  messageId: string;
}

/** An SMTP conversation failed (connection, TLS, negative reply or timeout). */
export class SmtpError extends Error {}

type Conn = Deno.Conn | Deno.TlsConn;

class Session {
  #conn: Conn;
  #buf = "";
  readonly #dec = new TextDecoder();
  readonly #enc = new TextEncoder();

  constructor(conn: Conn) {
    this.#conn = conn;
  }

  get conn(): Conn {
    return this.#conn;
  }

  async upgrade(hostname: string, caCerts?: string[]): Promise<void> {
    this.#conn = await Deno.startTls(this.#conn as Deno.TcpConn, { hostname, caCerts });
    this.#buf = "";
  }

  async #line(): Promise<string> {
    const chunk = new Uint8Array(4096);
    for (;;) {
      const i = this.#buf.indexOf("\r\n");
      if (i >= 0) {
        const line = this.#buf.slice(0, i);
        this.#buf = this.#buf.slice(i + 2);
        return line;
      }
      if (this.#buf.length > 65536) throw new SmtpError("SMTP reply line too long");
      const n = await this.#conn.read(chunk);
      if (n === null) throw new SmtpError("SMTP server closed the connection");
      this.#buf += this.#dec.decode(chunk.subarray(0, n), { stream: true });
    }
  }

  /** Reads one (multi-line) reply; throws unless its code is in `expect`. */
  async reply(expect: number[]): Promise<{ code: number; lines: string[] }> {
    const lines: string[] = [];
    for (;;) {
      const line = await this.#line();
      lines.push(line.slice(4));
      if (!/^\d{3}[ -]?/.test(line)) throw new SmtpError(`Malformed SMTP reply "${line}"`);
      if (line[3] !== "-") {
        const code = Number(line.slice(0, 3));
        if (!expect.includes(code)) {
          throw new SmtpError(`SMTP server answered ${code} ${lines.at(-1)}`);
        }
        return { code, lines };
      }
    }
  }

  async send(text: string): Promise<void> {
    const bytes = this.#enc.encode(text);
    let off = 0;
    while (off < bytes.length) off += await this.#conn.write(bytes.subarray(off));
  }

  async command(text: string, expect: number[]): Promise<{ code: number; lines: string[] }> {
    await this.send(`${text}\r\n`);
    return await this.reply(expect);
  }
}

const HEADER_UNSAFE_REGEXP = /[\r\n]/;

function b64(text: string): string {
  const bytes = new TextEncoder().encode(text);
  let bin = "";
  for (const b of bytes) bin += String.fromCharCode(b);
  return btoa(bin);
}

function encodeHeader(text: string): string {
  // RFC 2047 for non-ASCII subjects
  return /^[\x20-\x7e]*$/.test(text) ? text : `=?utf-8?B?${b64(text)}?=`;
}

function address(text: string): string {
  const m = text.match(/<([^<>]+)>\s*$/);
  return (m ? m[1] : text).trim();
}

/** Builds the RFC 5322 message text (headers + base64 body, CRLF line ends). */
export function buildMessage(msg: MailMessage): string {
  for (const v of [msg.from, msg.subject, msg.replyTo ?? "", ...msg.to]) {
    if (HEADER_UNSAFE_REGEXP.test(v)) throw new SmtpError("Line break in a mail header");
  }
  const host = address(msg.from).split("@")[1] ?? "localhost";
  const headers = [
    `From: ${msg.from}`,
    `To: ${msg.to.join(", ")}`,
    `Subject: ${encodeHeader(msg.subject)}`,
    `Date: ${new Date(msg.date).toUTCString().replace("GMT", "+0000")}`,
    `Message-ID: <${msg.messageId}@${host}>`,
    "MIME-Version: 1.0",
    `Content-Type: text/${msg.html ? "html" : "plain"}; charset="utf-8"`,
    "Content-Transfer-Encoding: base64",
  ];
  if (msg.replyTo) headers.push(`Reply-To: ${msg.replyTo}`);
  const body = b64(msg.body).replace(/.{1,76}/g, "$&\r\n");
  return `${headers.join("\r\n")}\r\n\r\n${body}`;
}

/** Delivers `msg` through the server; throws {@link SmtpError} on any failure. */
export async function sendSmtp(settings: SmtpSettings, msg: MailMessage): Promise<void> {
  if (msg.to.length === 0) throw new SmtpError("No recipient");
  const implicitTls = settings.port === 465;
  let session: Session | undefined;
  const timer = setTimeout(() => {
    try {
      session?.conn.close();
    } catch { /* already closed */ }
  }, Math.max(1, settings.timeout) * 1000);
  try {
    const conn = implicitTls
      ? await Deno.connectTls({
        hostname: settings.server,
        port: settings.port,
        caCerts: settings.caCerts,
      })
      : await Deno.connect({ hostname: settings.server, port: settings.port });
    session = new Session(conn);
    await session.reply([220]);
    let ehlo = await session.command("EHLO tessera", [250]);
    if (settings.tls && !implicitTls) {
      if (!ehlo.lines.some((l) => /^STARTTLS\b/i.test(l))) {
        throw new SmtpError("SMTP server does not offer STARTTLS");
      }
      await session.command("STARTTLS", [220]);
      await session.upgrade(settings.server, settings.caCerts);
      ehlo = await session.command("EHLO tessera", [250]);
    }
    if (settings.username) {
      const auth = ehlo.lines.find((l) => /^AUTH\b/i.test(l))?.toUpperCase() ?? "";
      if (auth.includes("PLAIN") || !auth.includes("LOGIN")) {
        await session.command(
          `AUTH PLAIN ${b64(`\0${settings.username}\0${settings.password}`)}`,
          [235],
        );
      } else {
        await session.command("AUTH LOGIN", [334]);
        await session.command(b64(settings.username), [334]);
        await session.command(b64(settings.password), [235]);
      }
    }
    await session.command(`MAIL FROM:<${address(msg.from)}>`, [250]);
    for (const to of msg.to) await session.command(`RCPT TO:<${address(to)}>`, [250, 251]);
    await session.command("DATA", [354]);
    // base64 lines never start with "." so no dot-stuffing is needed
    await session.send(`${buildMessage(msg)}.\r\n`);
    await session.reply([250]);
    await session.command("QUIT", [221]).catch(() => undefined);
  } catch (err) {
    if (err instanceof SmtpError) throw err;
    throw new SmtpError(`SMTP delivery failed: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
    try {
      session?.conn.close();
    } catch { /* already closed */ }
  }
}
