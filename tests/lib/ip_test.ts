import assert from "node:assert/strict";
import { clientAddress, inNetwork, parseIp, parseNetwork } from "../../src/lib/ip.ts";

Deno.test("parseNetwork and inNetwork handle IPv4, IPv6 and mapped addresses", () => {
  const net = parseNetwork("10.0.0.0/8")!;
  assert.ok(inNetwork(parseIp("10.1.2.3")!, net));
  assert.ok(inNetwork(parseIp("::ffff:10.1.2.3")!, net));
  assert.ok(!inNetwork(parseIp("11.0.0.1")!, net));
  assert.ok(!inNetwork(parseIp("::1")!, net));
  assert.ok(inNetwork(parseIp("::1")!, parseNetwork("::1")!));
  assert.equal(parseNetwork("10.0.0.0/33"), undefined);
  assert.equal(parseIp("nonsense"), undefined);
});

Deno.test("clientAddress believes X-Forwarded-For only from trusted proxies", () => {
  const trusted = [parseNetwork("127.0.0.1")!, parseNetwork("10.0.0.0/8")!];
  assert.equal(clientAddress("127.0.0.1", "192.0.2.7", trusted), "192.0.2.7");
  assert.equal(
    clientAddress("127.0.0.1", "198.51.100.1, 192.0.2.7, 10.0.0.5", trusted),
    "192.0.2.7",
  );
  assert.equal(clientAddress("192.0.2.9", "198.51.100.1", trusted), "192.0.2.9");
  assert.equal(clientAddress("127.0.0.1", "192.0.2.7", []), "127.0.0.1");
});

Deno.test("parseIp and clientAddress answer repeated texts the same (memo)", () => {
  for (let round = 0; round < 3; round++) {
    assert.equal(parseIp("::ffff:10.1.2.3")?.toString(), "10.1.2.3");
    assert.equal(parseIp("[2001:db8::1]")?.toString(), "2001:db8::1");
    assert.equal(parseIp("not an address"), undefined);
    assert.equal(clientAddress("::ffff:192.0.2.7", undefined, []), "192.0.2.7");
    assert.equal(clientAddress("garbage", undefined, []), "garbage");
  }
  // more distinct texts than the memo holds: still parsed correctly
  for (let i = 0; i < 3000; i++) {
    const text = `10.0.${(i >> 8) & 255}.${i & 255}`;
    assert.equal(parseIp(text)?.toString(), text);
  }
  const long = "1".repeat(100);
  assert.equal(parseIp(long), undefined);
});
