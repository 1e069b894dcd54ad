/**
 * A loopback RADIUS server for tests, built directly on the npm `radius` package
 * (not on Tessera's packet code): it answers each Access-Request with whatever
 * the scenario function returns, or not at all.
 *
 * @module
 */
import dgram from "node:dgram";
import type { Buffer } from "node:buffer";
import Radius from "radius";

// deno-lint-ignore no-explicit-any
const lib = Radius as any;

/** What the responder saw. */
export interface SeenRequest {
  attributes: Record<string, unknown>;
  hasMessageAuthenticator: boolean;
}

/** The reply to send, or undefined to stay silent. */
export type Scenario = (req: SeenRequest) =>
  | {
    code: "Access-Accept" | "Access-Reject" | "Access-Challenge";
    attributes?: unknown[][];
    /** Leave out the Message-Authenticator even when the request had one. */
    withoutMessageAuthenticator?: boolean;
  }
  | undefined;

/** A running responder. */
export interface Responder {
  port: number;
  seen: SeenRequest[];
  close(): Promise<void>;
}

/** Starts a responder on 127.0.0.1 with an ephemeral port. */
export async function startResponder(secret: string, scenario: Scenario): Promise<Responder> {
  const socket = dgram.createSocket("udp4");
  const seen: SeenRequest[] = [];
  socket.on("message", (msg: Buffer, rinfo: { address: string; port: number }) => {
    let packet;
    try {
      packet = lib.decode({ packet: msg, secret });
    } catch {
      return;
    }
    const req = {
      attributes: packet.attributes,
      hasMessageAuthenticator: packet.attributes["Message-Authenticator"] !== undefined,
    };
    seen.push(req);
    const answer = scenario(req);
    if (!answer) return;
    const reply = answer.withoutMessageAuthenticator
      ? lib.encode({
        code: answer.code,
        identifier: packet.identifier,
        authenticator: packet.authenticator,
        secret,
        attributes: answer.attributes ?? [],
        add_message_authenticator: false,
      })
      : lib.encode_response({
        packet,
        code: answer.code,
        secret,
        attributes: answer.attributes ?? [],
      });
    socket.send(reply, rinfo.port, rinfo.address);
  });
  await new Promise<void>((resolve) => socket.bind(0, "127.0.0.1", () => resolve()));
  return {
    port: socket.address().port,
    seen,
    close: () => new Promise<void>((resolve) => socket.close(() => resolve())),
  };
}
