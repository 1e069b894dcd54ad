import assert from "node:assert/strict";
import { X509Certificate } from "node:crypto";
import { chainProblem, parsePemCertificates } from "../../src/lib/x509_chain.ts";
import { makeAttestationPki } from "../http/_attestation_ca.ts";

const AT = Date.parse("2026-01-01T00:00:00Z");

Deno.test("parsePemCertificates reads every certificate of a bundle and nothing else", async () => {
  const pki = await makeAttestationPki();
  try {
    const certs = parsePemCertificates(`junk\n${pki.spareRootPem}\ntext\n${pki.rootPem}`);
    assert.deepEqual(certs.map((c) => c.subject.split("\n").at(-1)), [
      "CN=Spare Attestation Root",
      "CN=Test Attestation Root",
    ]);
    assert.deepEqual(parsePemCertificates("no certificate"), []);
    assert.throws(() =>
      parsePemCertificates("-----BEGIN CERTIFICATE-----AAAA-----END CERTIFICATE-----")
    );
  } finally {
    await pki.close();
  }
});

Deno.test("chainProblem accepts a chain that ends at an anchor and names what is wrong otherwise", async () => {
  const pki = await makeAttestationPki();
  try {
    const [root] = parsePemCertificates(pki.rootPem);
    const [spare] = parsePemCertificates(pki.spareRootPem);
    const [leaf] = pki.direct.x5c;
    const [deepLeaf, intermediate] = pki.viaIntermediate.x5c;
    const table: [string, Uint8Array[], X509Certificate[], number, RegExp | undefined][] = [
      ["signed by the anchor", [leaf], [spare, root], AT, undefined],
      ["via an intermediate", [deepLeaf, intermediate], [root], AT, undefined],
      ["the leaf itself is an anchor", [leaf], [new X509Certificate(leaf)], AT, undefined],
      [
        "the intermediate is an anchor",
        [deepLeaf, intermediate],
        [
          new X509Certificate(intermediate),
        ],
        AT,
        undefined,
      ],
      ["another anchor", [leaf], [spare], AT, /CN=direct" is not signed by a trust anchor/],
      ["intermediate missing", [deepLeaf], [root], AT, /CN=deep" is not signed by a trust/],
      ["a leaf as issuer", [deepLeaf, leaf], [root], AT, /CN=direct" signs but is not a CA/],
      ["expired", [leaf], [root], Date.parse("2036-06-01T00:00:00Z"), /is not valid at 2036/],
      ["not yet valid", [leaf], [root], Date.parse("2019-06-01T00:00:00Z"), /not valid at 2019/],
      ["no chain", [], [root], AT, /^no certificate chain$/],
      ["garbage", [new Uint8Array([1, 2, 3])], [root], AT, /does not parse/],
    ];
    for (const [name, chain, anchors, at, expected] of table) {
      const problem = chainProblem(chain, anchors, at);
      if (expected === undefined) assert.equal(problem, undefined, name);
      else assert.match(problem ?? "", expected, name);
    }
  } finally {
    await pki.close();
  }
});
