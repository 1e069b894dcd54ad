/**
 * A local stand-in for an SMSC, for the SMPP provider tests: SMPP over TCP on
 * loopback, PDUs framed by their length and parsed with the `smpp` library's
 * PDU parser; the raw bytes are kept so tests can check the wire format
 * itself.
 *
 * @module
 */
import { Buffer } from "node:buffer";
import smpp from "smpp";

/** One PDU the stub SMSC received: its bytes and the library's reading of them. */
export interface ReceivedPdu {
  raw: Uint8Array;
  // deno-lint-ignore no-explicit-any
  pdu: Record<string, any>;
}

/** What the stub SMSC answers. */
export interface SmscBehaviour {
  /** command_status of bind_transmitter_resp (0: bound). */
  bindStatus?: number;
  /** command_status of submit_sm_resp (0: accepted). */
  submitStatus?: number;
  /** Accept the connection but never answer. */
  isSilent?: boolean;
}

/** An SMPP SMSC on 127.0.0.1 that records every PDU and answers each request. */
export function startSmscStub(behaviour: SmscBehaviour = {}): {
  port: number;
  received: ReceivedPdu[];
  connections: () => number;
  close: () => void;
} {
  const listener = Deno.listen({ hostname: "127.0.0.1", port: 0 });
  const received: ReceivedPdu[] = [];
  const conns = new Set<Deno.Conn>();
  let count = 0;
  let messageId = 0;
  (async () => {
    for await (const conn of listener) {
      count++;
      conns.add(conn);
      serve(conn).catch(() => {}).finally(() => conns.delete(conn));
    }
  })().catch(() => {});

  async function serve(conn: Deno.Conn): Promise<void> {
    let pending = new Uint8Array(0);
    const chunk = new Uint8Array(4096);
    for (;;) {
      const n = await conn.read(chunk);
      if (n === null) break;
      const joined = new Uint8Array(pending.length + n);
      joined.set(pending);
      joined.set(chunk.subarray(0, n), pending.length);
      pending = joined;
      // a PDU starts with its own length (SMPP 3.4 §3.2)
      while (pending.length >= 4) {
        const length = new DataView(pending.buffer, pending.byteOffset).getUint32(0);
        if (pending.length < length) break;
        const raw = pending.slice(0, length);
        pending = pending.slice(length);
        const pdu = smpp.PDU.fromBuffer(Buffer.from(raw));
        received.push({ raw, pdu });
        if (behaviour.isSilent) continue;
        let answer;
        if (pdu.command === "bind_transmitter") {
          answer = pdu.response({ command_status: behaviour.bindStatus ?? 0, system_id: "stub" });
        } else if (pdu.command === "submit_sm") {
          answer = pdu.response({
            command_status: behaviour.submitStatus ?? 0,
            message_id: `m${++messageId}`,
          });
        } else answer = pdu.response();
        await conn.write(new Uint8Array(answer.toBuffer()));
        if (pdu.command === "unbind") {
          conn.close();
          return;
        }
      }
    }
    conn.close();
  }

  return {
    port: (listener.addr as Deno.NetAddr).port,
    received,
    connections: () => count,
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
