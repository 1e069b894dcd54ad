/**
 * Outgoing RADIUS: one Access-Request over UDP with retransmissions (spec 08 §2),
 * used by `test_request`, the `radius` token type and passthru.
 *
 * @module
 */
import dgram from "node:dgram";
import { Buffer } from "node:buffer";
import { AppError } from "../../errors.ts";
import type { Logger } from "../../lib/logger.ts";
import type { Random } from "../../lib/random.ts";
import { parseIp } from "../../lib/ip.ts";
import {
  ATTR,
  attribute,
  attributes,
  checkMessageAuthenticator,
  checkResponseAuthenticator,
  CODE,
  encodeAccessRequest,
  parsePacket,
  text,
} from "./packet.ts";

/** Where and how to send: a server definition with its plaintext secret. */
export interface RadiusTarget {
  server: string;
  port: number;
  secret: string;
  /** Total number of transmissions. */
  retries: number;
  /** Seconds to wait for a reply after each transmission. */
  timeout: number;
  /** Send a Message-Authenticator and require a valid one in the reply. */
  messageAuthenticator: boolean;
}

/** What to ask. */
export interface RadiusQuestion {
  userName: string;
  password: string;
  /** Raw State of an earlier Access-Challenge. */
  state?: Uint8Array;
  nasIdentifier?: string;
}

/** The outcome of one Access-Request. */
export interface RadiusAnswer {
  result: "accept" | "reject" | "challenge" | "timeout" | "error";
  /** State of an Access-Challenge (raw bytes). */
  state?: Uint8Array;
  /** Every Reply-Message of the reply. */
  replyMessages: string[];
}

/** The RADIUS exchange failed in a way that is an error, not a rejection (code 10 → HTTP 400). */
export class RadiusError extends AppError {
  constructor(message: string) {
    super(message, 10);
  }
}

/** Longest User-Password RFC 2865 allows. */
const MAX_PASSWORD_BYTES = 128;

/**
 * Sends an Access-Request to `target` and waits for a valid reply: at most
 * `retries` transmissions, `timeout` seconds each. Replies with the wrong
 * identifier or a bad Response Authenticator are ignored. Never throws for
 * network problems (they answer "error"); throws {@link RadiusError} when the
 * Message-Authenticator is required and missing or wrong.
 */
export async function sendAccessRequest(
  target: RadiusTarget,
  question: RadiusQuestion,
  options: { random: Random; log?: Logger },
): Promise<RadiusAnswer> {
  const random = options.random;
  if (new TextEncoder().encode(question.password).length > MAX_PASSWORD_BYTES) {
    throw new RadiusError(`The RADIUS password is longer than ${MAX_PASSWORD_BYTES} bytes`);
  }
  const [identifier] = random.bytes(1);
  const authenticator = random.bytes(16);
  const packet = encodeAccessRequest({
    identifier,
    authenticator,
    secret: target.secret,
    userName: question.userName,
    password: question.password,
    nasIdentifier: question.nasIdentifier,
    state: question.state,
    messageAuthenticator: target.messageAuthenticator,
  });
  const family = parseIp(target.server)?.kind() === "ipv6" ? "udp6" : "udp4";
  const host = target.server.replace(/^\[|\]$/g, "");
  const socket = dgram.createSocket(family);
  const retries = Math.max(1, target.retries);
  const log = options.log;

  return await new Promise<RadiusAnswer>((resolve, reject) => {
    let timer: ReturnType<typeof setTimeout> | undefined;
    let done = false;
    let sent = 0;
    const finish = (answer: RadiusAnswer | Error) => {
      if (done) return;
      done = true;
      clearTimeout(timer);
      try {
        socket.close();
      } catch {
        // already closed
      }
      if (answer instanceof Error) reject(answer);
      else resolve(answer);
    };

    socket.on("message", (msg: Uint8Array) => {
      const reply = parsePacket(msg);
      if (!reply || reply.identifier !== identifier) return;
      if (!checkResponseAuthenticator(msg, { authenticator, secret: target.secret })) {
        log?.warn("Ignoring a RADIUS reply with a bad Response Authenticator", {
          server: target.server,
        });
        return;
      }
      const ma = checkMessageAuthenticator(msg, target.secret, {
        requestAuthenticator: authenticator,
      });
      if (ma !== "valid" && (target.messageAuthenticator || ma === "invalid")) {
        if (target.messageAuthenticator) {
          finish(
            new RadiusError(
              `The Message-Authenticator of the RADIUS reply from "${target.server}" is ${ma}`,
            ),
          );
          return;
        }
        log?.warn("RADIUS reply with an invalid Message-Authenticator", {
          server: target.server,
        });
      }
      const replyMessages = attributes(reply, ATTR.replyMessage).map((v) => text(v)!);
      if (reply.code === CODE.accessAccept) finish({ result: "accept", replyMessages });
      else if (reply.code === CODE.accessReject) finish({ result: "reject", replyMessages });
      else if (reply.code === CODE.accessChallenge) {
        finish({ result: "challenge", state: attribute(reply, ATTR.state), replyMessages });
      }
    });
    socket.on("error", (err: Error) => {
      log?.warn("RADIUS request failed", { server: target.server, error: err.message });
      finish({ result: "error", replyMessages: [] });
    });

    const transmit = () => {
      if (done) return;
      sent++;
      socket.send(Buffer.from(packet), target.port, host, (err: Error | null) => {
        if (err) {
          log?.warn("Cannot send a RADIUS request", {
            server: target.server,
            error: err.message,
          });
          finish({ result: "error", replyMessages: [] });
        }
      });
      timer = setTimeout(() => {
        if (sent < retries) transmit();
        else finish({ result: "timeout", replyMessages: [] });
      }, target.timeout * 1000);
    };
    transmit();
  });
}
