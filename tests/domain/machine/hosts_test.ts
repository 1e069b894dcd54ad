import assert from "node:assert/strict";
import { hostsFilePath, normalizeIp, parseHosts } from "../../../src/domain/machine/mod.ts";
import { ParameterError } from "../../../src/errors.ts";

Deno.test("parseHosts follows the hosts-file rules of spec 07 §2.6", () => {
  const text = [
    "# comment line",
    "127.0.0.1\tlocalhost",
    "",
    "192.168.0.1   gandalf whitewizard",
    "10.0.0.9",
    "#10.0.0.8 hidden",
    "::1 ip6-localhost ip6-loopback # inline",
    "2001:0db8:0000:0000:0000:0000:0000:0001 six",
  ].join("\n");
  assert.deepEqual(parseHosts(text, "t"), [
    { id: "127.0.0.1", ip: "127.0.0.1", hostname: ["localhost"] },
    { id: "192.168.0.1", ip: "192.168.0.1", hostname: ["gandalf", "whitewizard"] },
    // [quirk] inline comments become host names
    { id: "::1", ip: "::1", hostname: ["ip6-localhost", "ip6-loopback", "#", "inline"] },
    { id: "2001:0db8:0000:0000:0000:0000:0000:0001", ip: "2001:db8::1", hostname: ["six"] },
  ]);
});

Deno.test("parseHosts fails on a first field that is not an address", () => {
  assert.throws(() => parseHosts("localhost 127.0.0.1\n", "t"), (e) => {
    assert.ok(e instanceof ParameterError);
    assert.equal(e.code, 905);
    assert.match(e.message, /line 1/);
    return true;
  });
});

Deno.test("normalizeIp accepts IPv4 dotted quads and IPv6, nothing else", () => {
  assert.equal(normalizeIp("192.168.0.1"), "192.168.0.1");
  assert.equal(normalizeIp("FE80:0:0::1"), "fe80::1");
  assert.equal(normalizeIp("192.168.1"), undefined);
  assert.equal(normalizeIp("gandalf"), undefined);
  assert.equal(normalizeIp(""), undefined);
});

Deno.test("hostsFilePath resolves relative names under the data dir and refuses ..", () => {
  assert.equal(hostsFilePath("/data", "hosts"), "/data/hosts");
  assert.equal(hostsFilePath("/data/", "etc/hosts"), "/data/etc/hosts");
  assert.equal(hostsFilePath("/data", "/etc/hosts"), "/etc/hosts");
  for (const bad of ["../hosts", "a/../../hosts", "/etc/../etc/hosts", "..", "a\\..\\b", ""]) {
    assert.throws(() => hostsFilePath("/data", bad), ParameterError, bad);
  }
});
