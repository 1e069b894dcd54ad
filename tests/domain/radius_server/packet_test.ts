import assert from "node:assert/strict";
import { Buffer } from "node:buffer";
import Radius from "radius";
import {
  ATTR,
  attributes,
  checkMessageAuthenticator,
  checkResponseAuthenticator,
  CODE,
  encodeAccessRequest,
  encodeReply,
  parsePacket,
} from "../../../src/domain/radius_server/packet.ts";

// deno-lint-ignore no-explicit-any
const lib = Radius as any;
const SECRET = "packet-secret";

function request(extra: unknown[][] = [], withMa = true): Buffer {
  return lib.encode({
    code: "Access-Request",
    identifier: 42,
    secret: SECRET,
    attributes: [["User-Name", "alice"], ["User-Password", "pw"], ...extra],
    add_message_authenticator: withMa,
  });
}

Deno.test("parsePacket refuses short, inconsistent and truncated packets", () => {
  assert.equal(parsePacket(new Uint8Array(10)), undefined);
  const good = request();
  assert.ok(parsePacket(good));
  const badLength = Buffer.from(good);
  badLength.writeUInt16BE(good.length + 10, 2);
  assert.equal(parsePacket(badLength), undefined);
  const truncated = Buffer.from(good);
  truncated[21] = 200; // first attribute claims more bytes than the packet has
  assert.equal(parsePacket(truncated), undefined);
  const zeroLen = Buffer.from(good);
  zeroLen[21] = 0;
  assert.equal(parsePacket(zeroLen), undefined);
  assert.equal(parsePacket(new Uint8Array(5000)), undefined);
});

Deno.test("checkMessageAuthenticator: valid, flipped bit, wrong secret, missing, bad length", () => {
  const good = request();
  assert.equal(checkMessageAuthenticator(good, SECRET), "valid");
  assert.equal(checkMessageAuthenticator(good, "other"), "invalid");
  const flipped = Buffer.from(good);
  flipped[flipped.length - 1] ^= 1;
  assert.equal(checkMessageAuthenticator(flipped, SECRET), "invalid");
  assert.equal(checkMessageAuthenticator(request([], false), SECRET), "missing");
  const short = lib.encode({
    code: "Access-Request",
    identifier: 1,
    secret: SECRET,
    attributes: [["User-Name", "a"], [80, Buffer.alloc(4)]],
  });
  assert.equal(checkMessageAuthenticator(short, SECRET), "invalid");
});

Deno.test("encodeReply: valid authenticators, Proxy-State echoed, long Reply-Message split", () => {
  const raw = request([["Proxy-State", Buffer.from("p1")], ["Proxy-State", Buffer.from("p2")]]);
  const req = parsePacket(raw)!;
  const message = "é".repeat(300); // 600 bytes of UTF-8
  const state = new TextEncoder().encode("tx-1");
  const reply = encodeReply({
    code: CODE.accessChallenge,
    request: req,
    secret: SECRET,
    replyMessage: message,
    state,
  });
  assert.equal(
    lib.verify_response({ request: raw, response: Buffer.from(reply), secret: SECRET }),
    true,
  );
  assert.equal(
    checkResponseAuthenticator(reply, { authenticator: req.authenticator, secret: SECRET }),
    true,
  );
  assert.equal(
    checkMessageAuthenticator(reply, SECRET, { requestAuthenticator: req.authenticator }),
    "valid",
  );
  const parsed = parsePacket(reply)!;
  assert.equal(parsed.code, CODE.accessChallenge);
  assert.equal(parsed.identifier, 42);
  const pieces = attributes(parsed, ATTR.replyMessage);
  assert.ok(pieces.every((p) => p.length <= 253));
  assert.equal(Buffer.concat(pieces).toString("utf8"), message);
  assert.deepEqual(
    attributes(parsed, ATTR.proxyState).map((v) => new TextDecoder().decode(v)),
    ["p1", "p2"],
  );
  assert.equal(new TextDecoder().decode(attributes(parsed, ATTR.state)[0]), "tx-1");
});

Deno.test("encodeAccessRequest hides the password (UTF-8, also empty) per RFC 2865", () => {
  for (const password of ["passwörd", "", "x".repeat(100)]) {
    const bytes = encodeAccessRequest({
      identifier: 3,
      authenticator: new Uint8Array(16).fill(7),
      secret: SECRET,
      userName: "nönäscii",
      password,
      nasIdentifier: "privacyIDEA",
      messageAuthenticator: true,
    });
    const raw = parsePacket(bytes)!;
    const hidden = attributes(raw, ATTR.userPassword)[0];
    assert.ok(hidden.length >= 16 && hidden.length % 16 === 0);
    assert.ok(!Buffer.from(hidden).toString("utf8").includes(password || "\u0000never"));
    const decoded = lib.decode({ packet: Buffer.from(bytes), secret: SECRET });
    assert.equal(decoded.attributes["User-Password"], password);
    assert.equal(decoded.attributes["User-Name"], "nönäscii");
    assert.equal(decoded.attributes["NAS-Identifier"], "privacyIDEA");
    assert.equal(checkMessageAuthenticator(bytes, SECRET), "valid");
  }
});
