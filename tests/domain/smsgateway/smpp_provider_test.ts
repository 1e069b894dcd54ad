/**
 * The SMPP provider against a local SMSC: the exact bytes of bind_transmitter,
 * submit_sm and unbind (built by hand here from SMPP 3.4 §4, not with the
 * library that sends them), GSM 03.38 / UCS-2 coding and concatenated parts as
 * privacyIDEA's smpplib makes them, SMSC refusals, a silent SMSC and a closed
 * port.
 */
import assert from "node:assert/strict";
import { makeParts, sendSmppSms } from "../../../src/domain/smsgateway/smpp_provider.ts";
import { SmsDeliveryError } from "../../../src/domain/smsgateway/http_provider.ts";
import { seededRandom } from "../../../src/lib/random.ts";
import { startSmscStub } from "./_smsc_stub.ts";

const enc = new TextEncoder();

/** A PDU as SMPP 3.4 §3.2 lays it out: 16-octet header, then the body. */
function pdu(commandId: number, sequence: number, ...body: (number | string | Uint8Array)[]) {
  const parts = body.map((p) =>
    typeof p === "number" ? Uint8Array.of(p) : typeof p === "string"
      ? enc.encode(`${p}\0`) // C-Octet String
      : p
  );
  const length = 16 + parts.reduce((n, p) => n + p.length, 0);
  const out = new Uint8Array(length);
  const view = new DataView(out.buffer);
  view.setUint32(0, length);
  view.setUint32(4, commandId);
  view.setUint32(8, 0);
  view.setUint32(12, sequence);
  let off = 16;
  for (const p of parts) {
    out.set(p, off);
    off += p.length;
  }
  return out;
}

function submitSm(
  sequence: number,
  fields: { sTon: number; sNpi: number; source: string; dTon: number; dNpi: number; dest: string },
  esmClass: number,
  dataCoding: number,
  message: Uint8Array,
) {
  return pdu(
    0x00000004,
    sequence,
    "", // service_type
    fields.sTon,
    fields.sNpi,
    fields.source,
    fields.dTon,
    fields.dNpi,
    fields.dest,
    esmClass,
    0, // protocol_id
    0, // priority_flag
    "", // schedule_delivery_time
    "", // validity_period
    0, // registered_delivery
    0, // replace_if_present_flag
    dataCoding,
    0, // sm_default_msg_id
    message.length, // sm_length
    message,
  );
}

const OPTIONS = {
  SMSC_HOST: "127.0.0.1",
  SYSTEM_ID: "tessera",
  PASSWORD: "s3cret",
  S_ADDR_TON: "5",
  S_ADDR_NPI: "0",
  S_ADDR: "Tessera",
  D_ADDR_TON: "1",
  D_ADDR_NPI: "0x1",
  TIMEOUT: "5",
};

Deno.test("SMPP: bind_transmitter, one submit_sm and unbind, byte for byte", async () => {
  const smsc = startSmscStub();
  try {
    await sendSmppSms(
      { ...OPTIONS, SMSC_PORT: String(smsc.port) },
      "491701234567",
      "Your code: 123456",
      seededRandom(1),
    );
    assert.equal(smsc.received.length, 3);
    assert.deepEqual(
      smsc.received[0].raw,
      pdu(0x00000002, 1, "tessera", "s3cret", "", 0x34, 0, 0, ""),
      "bind_transmitter: system_id, password, system_type, interface_version 3.4, ton, npi, range",
    );
    assert.deepEqual(
      smsc.received[1].raw,
      submitSm(
        2,
        { sTon: 5, sNpi: 0, source: "Tessera", dTon: 1, dNpi: 1, dest: "491701234567" },
        0x00,
        0x00,
        enc.encode("Your code: 123456"),
      ),
    );
    assert.deepEqual(smsc.received[2].raw, pdu(0x00000006, 3), "unbind");
    // the library's parser of the stub reads the same
    assert.equal(smsc.received[1].pdu.destination_addr, "491701234567");
    assert.equal(smsc.received[1].pdu.short_message.message, "Your code: 123456");
    assert.equal(smsc.connections(), 1);
  } finally {
    smsc.close();
  }
});

Deno.test("SMPP: message coding and parts as smpplib's make_parts", () => {
  const random = seededRandom(7);
  const gsm = makeParts("a{b}€ 1", random);
  assert.equal(gsm.dataCoding, 0);
  assert.equal(gsm.esmClass, 0);
  assert.deepEqual(
    [...gsm.parts[0]],
    [0x61, 0x1b, 0x28, 0x62, 0x1b, 0x29, 0x1b, 0x65, 0x20, 0x31],
    "GSM 03.38 with the escape table",
  );
  const ucs2 = makeParts("Код 123", random);
  assert.equal(ucs2.dataCoding, 8);
  assert.deepEqual([...ucs2.parts[0]].slice(0, 4), [0x04, 0x1a, 0x04, 0x3e]);
  assert.equal(ucs2.parts[0].length, 14);

  const long = makeParts("x".repeat(200), random);
  assert.equal(long.esmClass, 0x40);
  assert.equal(long.parts.length, 2);
  const ref = long.parts[0][3];
  assert.deepEqual([...long.parts[0].subarray(0, 6)], [0x05, 0x00, 0x03, ref, 2, 1]);
  assert.deepEqual([...long.parts[1].subarray(0, 6)], [0x05, 0x00, 0x03, ref, 2, 2]);
  assert.equal(long.parts[0].length, 6 + 153);
  assert.equal(long.parts[1].length, 6 + 47);
  assert.equal(makeParts("x".repeat(160), random).parts.length, 1, "160 characters fit");

  const longUcs2 = makeParts("Ж".repeat(100), random);
  assert.equal(longUcs2.dataCoding, 8);
  assert.deepEqual(longUcs2.parts.map((p) => p.length), [6 + 134, 6 + 66]);
  assert.equal(makeParts("Ж".repeat(70), random).parts.length, 1, "70 UCS-2 characters fit");
});

Deno.test("SMPP: a long text goes as concatenated submit_sm parts in one session", async () => {
  const smsc = startSmscStub();
  try {
    const text = "Hello Alice,\nthe administrator disabled your token. ".repeat(4);
    await sendSmppSms({ SMSC_HOST: "127.0.0.1", SMSC_PORT: String(smsc.port) }, "49170", text, {
      bytes: () => Uint8Array.of(0x2a),
    });
    const submits = smsc.received.filter((r) => r.pdu.command === "submit_sm");
    assert.equal(submits.length, 2);
    const first = submits[0].raw;
    const dest = { sTon: 0, sNpi: 0, source: "", dTon: 0, dNpi: 0, dest: "49170" };
    const encoded = enc.encode(text);
    assert.deepEqual(
      first,
      submitSm(
        2,
        dest,
        0x40,
        0x00,
        Uint8Array.of(5, 0, 3, 0x2a, 2, 1, ...encoded.subarray(0, 153)),
      ),
    );
    assert.deepEqual(
      submits[1].raw,
      submitSm(3, dest, 0x40, 0x00, Uint8Array.of(5, 0, 3, 0x2a, 2, 2, ...encoded.subarray(153))),
    );
    assert.equal(smsc.connections(), 1);
  } finally {
    smsc.close();
  }
});

Deno.test("SMPP: a refused bind or submit, a silent SMSC and a closed port fail the send", async () => {
  const cases: [string, Parameters<typeof startSmscStub>[0], RegExp][] = [
    [
      "bind refused",
      { bindStatus: 0x0e },
      /^SMS could not be sent: bind_transmitter_resp status 0x0000000e$/,
    ],
    [
      "submit refused",
      { submitStatus: 0x45 },
      /^SMS could not be sent: submit_sm_resp status 0x00000045$/,
    ],
    ["silent", { isSilent: true }, /^SMS could not be sent: no answer within 1 s$/],
  ];
  for (const [name, behaviour, message] of cases) {
    const smsc = startSmscStub(behaviour);
    const started = Date.now();
    try {
      await assert.rejects(
        sendSmppSms(
          { ...OPTIONS, SMSC_PORT: String(smsc.port), TIMEOUT: "1" },
          "49170",
          "123456",
          seededRandom(1),
        ),
        (err: Error) => err instanceof SmsDeliveryError && message.test(err.message),
        name,
      );
      assert.ok(Date.now() - started < 3000, `${name}: bounded`);
      if (name === "bind refused") {
        assert.deepEqual(smsc.received.map((r) => r.pdu.command), ["bind_transmitter"]);
      }
    } finally {
      smsc.close();
    }
  }
  const closed = startSmscStub();
  const port = closed.port;
  closed.close();
  await assert.rejects(
    sendSmppSms({ SMSC_HOST: "127.0.0.1", SMSC_PORT: String(port) }, "49170", "1", seededRandom(1)),
    (err: Error) => err instanceof SmsDeliveryError && /^SMS could not be sent: /.test(err.message),
  );
  await assert.rejects(
    sendSmppSms({ SMSC_PORT: "2775" }, "49170", "1", seededRandom(1)),
    (err: Error) => err.message === "No SMSC_HOST specified in the provider config.",
  );
  await assert.rejects(
    sendSmppSms({ SMSC_HOST: "127.0.0.1" }, "49170", "1", seededRandom(1)),
    (err: Error) => err.message === "No SMSC_PORT specified in the provider config.",
  );
});
