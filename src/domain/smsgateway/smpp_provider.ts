/**
 * The SMPP SMS provider (spec 14 §21.3): one SMPP 3.4 session per SMS with the
 * SMSC of SMSC_HOST:SMSC_PORT — `bind_transmitter` (SYSTEM_ID, PASSWORD),
 * one `submit_sm` per message part, `unbind` — through the `smpp` npm library
 * (PDU encoding, framing and the GSM 03.38 table; no hand-written wire code).
 *
 * Text and parts as privacyIDEA's smpplib `make_parts`: text the GSM 03.38
 * alphabet can hold goes as data_coding 0 (one octet per character), any
 * other text as UCS-2 (data_coding 8); more than 160 (GSM) or 70 (UCS-2)
 * characters are split into parts of 153 or 134 octets, each behind a
 * concatenation header (esm_class 0x40). Unlike privacyIDEA, each
 * `submit_sm_resp` is awaited and a non-zero status fails the send, and the
 * whole session has a deadline (TIMEOUT, default 10 s).
 *
 * @module
 */
import { Buffer } from "node:buffer";
import smpp from "smpp";
import type { Random } from "../../lib/random.ts";
import { SmsDeliveryError } from "./http_provider.ts";

/** The parameter description of `GET /smsgateway/providers` (privacyIDEA's, plus TIMEOUT). */
export const SMPP_PARAMETERS: Record<string, Record<string, unknown>> = {
  SMSC_HOST: { required: true, description: "SMSC Host IP" },
  SMSC_PORT: { required: true, description: "SMSC Port" },
  SYSTEM_ID: { description: "SMSC Service ID" },
  PASSWORD: { description: "Password for authentication on SMSC" },
  S_ADDR_TON: { description: "SOURCE_ADDR_TON Special Flag" },
  S_ADDR_NPI: { description: "S_ADDR_NPI Special Flag" },
  S_ADDR: { description: "Source address (SMS sender)" },
  D_ADDR_TON: { description: "DESTINATION_ADDR_TON Special Flag" },
  D_ADDR_NPI: { description: "D_ADDR_NPI Special Flag" },
  REGEXP: {
    description:
      "Regular expression to modify the phone number to make it compatible with the provider. For example to remove pluses and slashes enter something like '/[\\+/]//'.",
  },
  TIMEOUT: { description: "Seconds for the whole SMPP session (Tessera). Defaults to 10." },
};

/** Option keys whose change means the stored PASSWORD would go to another SMSC. */
export const SMPP_TARGETS = ["SMSC_HOST", "SMSC_PORT"];

const DEFAULT_TIMEOUT_S = 10;
// SMPP 3.4 §5.2.24 / GSM 03.40: one SMS holds 160 septets or 140 octets
const GSM_LENGTH = 160;
const GSM_PART_SIZE = 153;
const UCS2_LENGTH = 70;
const UCS2_PART_SIZE = 134;
const DATA_CODING_DEFAULT = 0x00;
const DATA_CODING_UCS2 = 0x08;
const ESM_CLASS_DEFAULT = 0x00;
const ESM_CLASS_UDHI = 0x40;
const INTERFACE_VERSION_34 = 0x34;
const UNBIND_WAIT_MS = 1000;
const HOST_REGEXP = /^[A-Za-z0-9.:[\]_-]{1,255}$/;

/** The `smpp` library's PDU as far as this module reads it. */
interface Pdu {
  command: string;
  command_status: number;
}

/** The `smpp` library's session as far as this module uses it. */
interface Session {
  on(event: "connect" | "close", listener: () => void): void;
  on(event: "error", listener: (err: Error) => void): void;
  bind_transmitter(options: Record<string, unknown>, onResponse: (pdu: Pdu) => void): boolean;
  submit_sm(options: Record<string, unknown>, onResponse: (pdu: Pdu) => void): boolean;
  unbind(onResponse: (pdu: Pdu) => void): boolean;
  destroy(): void;
}

const library = smpp as unknown as {
  connect(options: { host: string; port: number }): Session;
  gsmCoder: { encode(text: string, shift: number): Buffer };
  encodings: { ASCII: { match(text: string): boolean } };
};

/**
 * A TON/NPI option as privacyIDEA's `parse_int` reads it (decimal, else hex),
 * or undefined when it is neither or not one octet.
 */
export function parseOctet(value: string | undefined): number | undefined {
  const s = (value ?? "").trim();
  if (s === "") return 0;
  let n: number;
  if (/^\d+$/.test(s)) n = Number(s);
  else if (/^(0x)?[0-9a-f]+$/i.test(s)) n = parseInt(s.replace(/^0x/i, ""), 16);
  else return undefined;
  return n <= 255 ? n : undefined;
}

/** Problems of a definition's options (empty: fine), each naming its option. */
export function smppOptionProblems(options: Record<string, string>): string[] {
  const problems: string[] = [];
  const host = options.SMSC_HOST ?? "";
  if (host === "") problems.push("Missing parameter: option.SMSC_HOST");
  else if (!HOST_REGEXP.test(host)) {
    problems.push(`Cannot parse parameter "option.SMSC_HOST": expected a host name or address`);
  }
  const port = options.SMSC_PORT ?? "";
  if (port === "") problems.push("Missing parameter: option.SMSC_PORT");
  else if (!/^\d{1,5}$/.test(port) || Number(port) < 1 || Number(port) > 65535) {
    problems.push(
      `Cannot parse parameter "option.SMSC_PORT": expected a port from 1 to 65535, got "${
        port.slice(0, 20)
      }"`,
    );
  }
  for (const key of ["S_ADDR_TON", "S_ADDR_NPI", "D_ADDR_TON", "D_ADDR_NPI"]) {
    if (parseOctet(options[key]) === undefined) {
      problems.push(
        `Cannot parse parameter "option.${key}": expected a number from 0 to 255 (decimal or hex)`,
      );
    }
  }
  const timeout = options.TIMEOUT;
  if (timeout !== undefined && timeout !== "" && !(Number(timeout) >= 1 && Number(timeout) <= 60)) {
    problems.push(`Cannot parse parameter "option.TIMEOUT": expected seconds from 1 to 60`);
  }
  return problems;
}

/** The message parts, data_coding and esm_class of `text` (smpplib's `make_parts`). */
export function makeParts(
  text: string,
  random: Random,
): { parts: Buffer[]; dataCoding: number; esmClass: number } {
  const isGsm = library.encodings.ASCII.match(text);
  const encoded = isGsm ? library.gsmCoder.encode(text, 0) : utf16be(text);
  const dataCoding = isGsm ? DATA_CODING_DEFAULT : DATA_CODING_UCS2;
  // smpplib counts characters (code units), not octets, to decide on splitting
  if (text.length <= (isGsm ? GSM_LENGTH : UCS2_LENGTH)) {
    return { parts: [encoded], dataCoding, esmClass: ESM_CLASS_DEFAULT };
  }
  const size = isGsm ? GSM_PART_SIZE : UCS2_PART_SIZE;
  const chunks: Buffer[] = [];
  for (let i = 0; i < encoded.length; i += size) chunks.push(encoded.subarray(i, i + size));
  if (chunks.length > 255) throw new SmsDeliveryError("SMS could not be sent: message too long");
  const reference = random.bytes(1)[0];
  const parts = chunks.map((chunk, i) =>
    // user data header: concatenated short message, 8-bit reference (3GPP TS 23.040 §9.2.3.24.1)
    Buffer.concat([Buffer.from([0x05, 0x00, 0x03, reference, chunks.length, i + 1]), chunk])
  );
  return { parts, dataCoding, esmClass: ESM_CLASS_UDHI };
}

function utf16be(text: string): Buffer {
  const out = Buffer.alloc(text.length * 2);
  for (let i = 0; i < text.length; i++) out.writeUInt16BE(text.charCodeAt(i), i * 2);
  return out;
}

function statusText(pdu: Pdu): string {
  return `${pdu.command} status 0x${pdu.command_status.toString(16).padStart(8, "0")}`;
}

/**
 * Sends `text` to `phone` through the SMSC of the definition; throws
 * {@link SmsDeliveryError} ("SMS could not be sent: …") on any failure.
 */
export async function sendSmppSms(
  options: Record<string, string>,
  phone: string,
  text: string,
  random: Random,
): Promise<void> {
  if (!options.SMSC_HOST) {
    throw new SmsDeliveryError("No SMSC_HOST specified in the provider config.");
  }
  if (!options.SMSC_PORT) {
    throw new SmsDeliveryError("No SMSC_PORT specified in the provider config.");
  }
  const problems = smppOptionProblems(options);
  if (problems.length > 0) throw new SmsDeliveryError(`SMS could not be sent: ${problems[0]}`);
  const { parts, dataCoding, esmClass } = makeParts(text, random);
  const timeoutMs = Number(options.TIMEOUT || DEFAULT_TIMEOUT_S) * 1000;
  const session = library.connect({
    host: options.SMSC_HOST,
    port: Number(options.SMSC_PORT),
  });
  let fail: (err: Error) => void = () => {};
  const failed = new Promise<never>((_, reject) => {
    fail = reject;
  });
  // keep the rejection from counting as unhandled when the send wins
  failed.catch(() => {});
  session.on("error", (err) => fail(err));
  session.on("close", () => fail(new Error("the SMSC closed the connection")));
  const timer = setTimeout(
    () => fail(new Error(`no answer within ${timeoutMs / 1000} s`)),
    timeoutMs,
  );
  /** Sends one request and waits for its answer (or the first failure). */
  const request = (send: (done: (pdu: Pdu) => void) => boolean): Promise<Pdu> =>
    Promise.race([
      new Promise<Pdu>((resolve, reject) => {
        if (!send(resolve)) reject(new Error("the connection is not writable"));
      }),
      failed,
    ]);
  try {
    await Promise.race([new Promise<void>((resolve) => session.on("connect", resolve)), failed]);
    const bound = await request((done) =>
      session.bind_transmitter({
        system_id: options.SYSTEM_ID ?? "",
        password: options.PASSWORD ?? "",
        system_type: "",
        interface_version: INTERFACE_VERSION_34,
        addr_ton: 0,
        addr_npi: 0,
        address_range: "",
      }, done)
    );
    if (bound.command_status !== 0) throw new Error(statusText(bound));
    for (const part of parts) {
      const answer = await request((done) =>
        session.submit_sm({
          source_addr_ton: parseOctet(options.S_ADDR_TON),
          source_addr_npi: parseOctet(options.S_ADDR_NPI),
          source_addr: options.S_ADDR ?? "",
          dest_addr_ton: parseOctet(options.D_ADDR_TON),
          dest_addr_npi: parseOctet(options.D_ADDR_NPI),
          destination_addr: phone,
          esm_class: esmClass,
          data_coding: dataCoding,
          short_message: part,
        }, done)
      );
      if (answer.command_status !== 0) throw new Error(statusText(answer));
    }
    // a polite goodbye, briefly: the message is already accepted, so its failure changes nothing
    let unbindTimer: ReturnType<typeof setTimeout> | undefined;
    await Promise.race([
      request((done) => session.unbind(done)),
      new Promise((resolve) => unbindTimer = setTimeout(resolve, UNBIND_WAIT_MS)),
    ]).catch(() => undefined).finally(() => clearTimeout(unbindTimer));
  } catch (err) {
    throw new SmsDeliveryError(`SMS could not be sent: ${(err as Error).message}`);
  } finally {
    clearTimeout(timer);
    session.destroy();
  }
}
