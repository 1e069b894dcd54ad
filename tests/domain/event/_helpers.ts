/**
 * Test helpers for the event engine: a test app with an echo endpoint that
 * emits an event, a local HTTP receiver and a local SMTP sink.
 *
 * @module
 */
import { createTestApp, type TestApp } from "../../test_app.ts";
import { ok } from "../../../src/http/envelope.ts";
import { ParameterError } from "../../../src/errors.ts";

/**
 * A test app with `GET|POST /ttype/<type>` (event `ttype`, no JWT needed)
 * answering `{params}` (`/ttype/fail` throws) — a stand-in endpoint to watch what handlers
 * change — and `POST /tokengroup/<name>` (event `tokengroup_add`, admin JWT).
 */
export async function createEventTestApp(): Promise<TestApp> {
  const t = await createTestApp({
    routeRules: {
      "GET /ttype/:type": { roles: "public" },
      "POST /ttype/:type": { roles: "public" },
      "POST /tokengroup/:name": { roles: "admin", why: "a stand-in admin endpoint" },
    },
  });
  t.app.on(["GET", "POST"], "/ttype/:type", (c) => {
    if (c.req.param("type") === "fail") throw new ParameterError("the endpoint failed");
    return ok(c, { params: { ...c.var.params } }, { detail: { serial: "S1", message: "echo" } });
  });
  t.app.post("/tokengroup/:name", (c) => ok(c, true));
  return t;
}

/** Creates a definition through the API and returns its id. */
export async function addEvent(t: TestApp, body: Record<string, unknown>): Promise<number> {
  const res = await t.asAdmin("POST", "/event", { body, json: true });
  const json = await res.json();
  if (res.status !== 200) throw new Error(`POST /event failed: ${JSON.stringify(json)}`);
  return json.result.value as number;
}

/** Waits until `check` holds (the audit writer and background work are asynchronous). */
export async function eventually(
  check: () => boolean | Promise<boolean>,
  ms = 3000,
): Promise<void> {
  const end = Date.now() + ms;
  while (Date.now() < end) {
    if (await check()) return;
    await new Promise((r) => setTimeout(r, 10));
  }
  throw new Error("condition not reached in time");
}

/** A received HTTP request. */
export interface Received {
  method: string;
  url: string;
  contentType: string;
  body: string;
}

/** A local HTTP receiver on an ephemeral port. */
export function startReceiver(status = 200): {
  url: string;
  received: Received[];
  close: () => Promise<void>;
} {
  const received: Received[] = [];
  const server = Deno.serve({ hostname: "127.0.0.1", port: 0, onListen: () => {} }, async (req) => {
    received.push({
      method: req.method,
      url: req.url,
      contentType: req.headers.get("content-type") ?? "",
      body: await req.text(),
    });
    return new Response("ok", { status });
  });
  return {
    url: `http://127.0.0.1:${server.addr.port}/hook`,
    received,
    close: () => server.shutdown(),
  };
}

/** One mail the sink accepted. */
export interface SunkMail {
  from: string;
  to: string[];
  data: string;
  auth?: string;
}

/** A minimal SMTP server on an ephemeral port that accepts every mail. */
export function startSmtpSink(): { port: number; mails: SunkMail[]; close: () => void } {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const mails: SunkMail[] = [];
  const conns = new Set<Deno.Conn>();
  (async () => {
    for await (const conn of listener) {
      conns.add(conn);
      serve(conn, mails).catch(() => {}).finally(() => conns.delete(conn));
    }
  })().catch(() => {});
  return {
    port: (listener.addr as Deno.NetAddr).port,
    mails,
    close: () => {
      listener.close();
      for (const c of conns) {
        try {
          c.close();
        } catch { /* closed */ }
      }
    },
  };
}

async function serve(conn: Deno.Conn, mails: SunkMail[]): Promise<void> {
  const enc = new TextEncoder();
  const dec = new TextDecoder();
  const write = (s: string) => conn.write(enc.encode(s));
  let buf = "";
  const buffer = new Uint8Array(4096);
  const readLine = async (): Promise<string | null> => {
    for (;;) {
      const i = buf.indexOf("\r\n");
      if (i >= 0) {
        const line = buf.slice(0, i);
        buf = buf.slice(i + 2);
        return line;
      }
      const n = await conn.read(buffer);
      if (n === null) return null;
      buf += dec.decode(buffer.subarray(0, n));
    }
  };
  await write("220 sink ESMTP\r\n");
  let mail: SunkMail = { from: "", to: [], data: "" };
  for (;;) {
    const line = await readLine();
    if (line === null) break;
    const cmd = line.toUpperCase();
    if (cmd.startsWith("EHLO")) await write("250-sink\r\n250-AUTH PLAIN LOGIN\r\n250 8BITMIME\r\n");
    else if (cmd.startsWith("AUTH PLAIN")) {
      mail.auth = atob(line.slice(11));
      await write("235 ok\r\n");
    } else if (cmd.startsWith("MAIL FROM:")) {
      mail.from = line.slice(10).replace(/[<>]/g, "");
      await write("250 ok\r\n");
    } else if (cmd.startsWith("RCPT TO:")) {
      mail.to.push(line.slice(8).replace(/[<>]/g, ""));
      await write("250 ok\r\n");
    } else if (cmd === "DATA") {
      await write("354 go\r\n");
      const lines: string[] = [];
      for (;;) {
        const l = await readLine();
        if (l === null || l === ".") break;
        lines.push(l);
      }
      mail.data = lines.join("\r\n");
      mails.push(mail);
      mail = { from: "", to: [], data: "" };
      await write("250 queued\r\n");
    } else if (cmd === "QUIT") {
      await write("221 bye\r\n");
      break;
    } else await write("250 ok\r\n");
  }
  conn.close();
}

/** Decodes the base64 body of a mail the sink received. */
export function mailBody(data: string): string {
  const [, body] = data.split("\r\n\r\n");
  const bin = atob(body.replace(/\r\n/g, ""));
  return new TextDecoder().decode(Uint8Array.from(bin, (ch) => ch.charCodeAt(0)));
}
