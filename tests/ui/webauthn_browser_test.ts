/**
 * WebAuthn and passkeys with a real browser: Debian's chromium, headless,
 * driven by playwright-core, with Chrome's virtual authenticator (CDP
 * `WebAuthn.addVirtualAuthenticator`: CTAP2, internal, resident keys, user
 * verification). The page is served from `http://localhost:<port>` (RP id
 * `localhost`); `navigator.credentials.create()`/`get()` run in the page
 * with the options of the server's `/token/init`, `/validate/check` and
 * `/validate/initialize` answers, and the page posts the results back
 * (so the Origin header is the browser's own). The page passes challenges
 * on as privacyIDEA's web UI does: a passkey challenge as the bytes of its
 * text, a webauthn nonce decoded. A webauthn security key (packed
 * attestation with the virtual key's certificate) and a passkey are enrolled
 * and log in; user verification is required at login.
 *
 * Runs in the SQLite half of the test command only (the browser side is
 * engine-blind; the HTTP tests cover both engines).
 */
import assert from "node:assert/strict";
import { type Browser, chromium, type Page } from "playwright-core";
import { TEST_ENGINE } from "../test_db.ts";
import { addPolicy, appWithAlice } from "../http/_challenge_types.ts";
import { serveApp } from "../http/_serve_app.ts";

const CHROMIUM_CANDIDATES = ["/usr/bin/chromium", "/usr/bin/chromium-browser"];

function chromiumPath(): string {
  const configured = Deno.env.get("CHROMIUM_PATH");
  for (const p of configured ? [configured] : CHROMIUM_CANDIDATES) {
    try {
      if (Deno.statSync(p).isFile) return p;
    } catch { /* next */ }
  }
  throw new Error(
    "chromium not found: install Debian's chromium package (.ci/setup-extra) or set CHROMIUM_PATH",
  );
}

// deno-lint-ignore no-explicit-any
type Json = Record<string, any>;

/**
 * Calls the API from the page (same origin, so the browser sets Origin):
 * JSON body, optional JWT; returns the parsed answer.
 */
async function api(
  page: Page,
  method: string,
  path: string,
  body?: Record<string, unknown>,
  token?: string,
): Promise<Json> {
  return await page.evaluate(async ({ method, path, body, token }) => {
    const res = await fetch(path, {
      method,
      headers: {
        ...(body ? { "content-type": "application/json" } : {}),
        ...(token ? { "PI-Authorization": token } : {}),
      },
      body: body ? JSON.stringify(body) : undefined,
    });
    return { status: res.status, ...(await res.json()) };
  }, { method, path, body, token });
}

/**
 * The page-side helpers: base64url both ways, and the challenge as
 * privacyIDEA's web UI passes a passkey challenge on (the bytes of the
 * challenge text, `Uint8Array.from(challenge, c => c.charCodeAt(0))`); its
 * webauthn client decodes the nonce instead (`unb64`).
 */
const PAGE_HELPERS = `
  window.b64 = (buf) => btoa(String.fromCharCode(...new Uint8Array(buf)))
    .replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
  window.unb64 = (s) => {
    const t = s.replaceAll("-", "+").replaceAll("_", "/");
    return Uint8Array.from(atob(t + "=".repeat((4 - t.length % 4) % 4)), (c) => c.charCodeAt(0));
  };
  window.textBytes = (s) => Uint8Array.from(s, (c) => c.charCodeAt(0));
  window.clientChallenge = (buf) => JSON.parse(new TextDecoder().decode(buf)).challenge;
`;

/** base64url of a text's bytes: the client data challenge of privacyIDEA's passkey clients. */
function b64urlOfText(text: string): string {
  return btoa(text).replaceAll("+", "-").replaceAll("/", "_").replace(/=+$/, "");
}

Deno.test({
  name: "webauthn and passkey in chromium's virtual authenticator: enrolment and login",
  ignore: TEST_ENGINE !== "sqlite",
  sanitizeResources: false,
  sanitizeOps: false,
}, async (t) => {
  const app = await appWithAlice();
  await addPolicy(app, "fido", {
    scope: "enrollment",
    action: {
      webauthn_relying_party_id: "localhost",
      webauthn_relying_party_name: "Tessera test",
      // the virtual key sends a packed attestation with its batch certificate
      webauthn_authenticator_attestation_form: "direct",
      webauthn_authenticator_attestation_level: "untrusted",
      webauthn_timeout: "30",
    },
  });
  await addPolicy(app, "uv", {
    scope: "authentication",
    action: { webauthn_user_verification_requirement: "required" },
  });
  const served = serveApp(app);
  const base = served.url.replace("127.0.0.1", "localhost");
  const adminToken = await app.adminToken();
  let browser: Browser | undefined;
  try {
    browser = await chromium.launch({
      executablePath: chromiumPath(),
      headless: true,
      args: ["--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage"],
    });
    const context = await browser.newContext();
    const page = await context.newPage();
    // any page of the server's origin: localhost is a secure context for WebAuthn
    await page.goto(`${base}/healthz/`);
    await page.evaluate(PAGE_HELPERS);
    const cdp = await context.newCDPSession(page);
    await cdp.send("WebAuthn.enable");
    const { authenticatorId } = await cdp.send("WebAuthn.addVirtualAuthenticator", {
      options: {
        protocol: "ctap2",
        transport: "internal",
        hasResidentKey: true,
        hasUserVerification: true,
        isUserVerified: true,
        automaticPresenceSimulation: true,
      },
    });

    let webauthnSerial = "";
    await t.step("a webauthn security key is enrolled through both steps", async () => {
      const step1 = await api(page, "POST", "/token/init", {
        type: "webauthn",
        user: "alice",
        realm: "realm1",
        pin: "1234",
      }, adminToken);
      assert.equal(step1.status, 200, JSON.stringify(step1));
      webauthnSerial = step1.detail.serial;
      const request = step1.detail.webAuthnRegisterRequest;
      const created: Json = await page.evaluate(async (r) => {
        const w = window as unknown as Json;
        const cred = await (navigator as unknown as Json).credentials.create({
          publicKey: {
            challenge: w.unb64(r.nonce),
            rp: r.relyingParty,
            // the serial's characters are the WebAuthn user id (spec 11 §4.2)
            user: {
              id: new TextEncoder().encode(r.serialNumber),
              name: r.name,
              displayName: r.displayName,
            },
            pubKeyCredParams: r.pubKeyCredAlgorithms,
            authenticatorSelection: r.authenticatorSelection,
            timeout: r.timeout,
            attestation: r.attestation,
          },
        }) as Json;
        const res = cred.response;
        return {
          clientdata: w.b64(res.clientDataJSON),
          regdata: w.b64(res.attestationObject),
        };
      }, request);
      const step2 = await api(page, "POST", "/token/init", {
        type: "webauthn",
        serial: webauthnSerial,
        transaction_id: step1.detail.transaction_id,
        ...created,
      }, adminToken);
      assert.equal(step2.status, 200, JSON.stringify(step2));
      assert.equal(step2.detail.rollout_state, "enrolled");
      assert.ok(step2.detail.webAuthnRegisterResponse.subject);
      const list = await api(
        page,
        "GET",
        `/token/?serial=${webauthnSerial}`,
        undefined,
        adminToken,
      );
      const token = list.result.value.tokens[0];
      assert.equal(token.active, true);
      assert.equal(token.info.origin, base, "the origin the browser sent");
      assert.equal(token.info.attestation_level, "untrusted");
      assert.match(token.info.attestation_subject, /OU=Authenticator Attestation/);
      assert.match(token.info.attestation_serial, /^\d+$/);
    });

    await t.step("the PIN asks for the key; the key's assertion logs alice in", async () => {
      const first = await api(page, "POST", "/validate/check", { user: "alice", pass: "1234" });
      assert.equal(first.result.authentication, "CHALLENGE", JSON.stringify(first));
      const entry = first.detail.multi_challenge.find((e: Json) => e.serial === webauthnSerial);
      const sign = entry.attributes.webAuthnSignRequest;
      assert.equal(sign.userVerification, "required");
      const asserted: Json = await page.evaluate(async (s) => {
        const w = window as unknown as Json;
        const cred = await (navigator as unknown as Json).credentials.get({
          publicKey: {
            challenge: w.unb64(s.challenge),
            rpId: s.rpId,
            allowCredentials: s.allowCredentials.map((c: Json) => ({
              type: c.type,
              id: w.unb64(c.id),
              transports: c.transports,
            })),
            userVerification: s.userVerification,
            timeout: s.timeout,
          },
        }) as Json;
        const res = cred.response;
        return {
          credentialid: cred.id,
          clientdata: w.b64(res.clientDataJSON),
          signaturedata: w.b64(res.signature),
          authenticatordata: w.b64(res.authenticatorData),
          ...(res.userHandle ? { userhandle: w.b64(res.userHandle) } : {}),
        };
      }, sign);
      const body = {
        user: "alice",
        pass: "",
        transaction_id: first.detail.transaction_id,
        ...asserted,
      };
      const ok = await api(page, "POST", "/validate/check", body);
      assert.equal(ok.status, 200, JSON.stringify(ok));
      assert.equal(ok.result.value, true, JSON.stringify(ok));
      assert.equal(ok.detail.username, "alice");
      assert.equal(ok.detail.serial, webauthnSerial);
      const again = await api(page, "POST", "/validate/check", body);
      assert.equal(again.status, 404, "the challenge is answered once");
    });

    let passkeySerial = "";
    await t.step("a passkey is enrolled (resident key, user handle fido2_user_id)", async () => {
      const step1 = await api(page, "POST", "/token/init", {
        type: "passkey",
        user: "alice",
        realm: "realm1",
      }, adminToken);
      assert.equal(step1.status, 200, JSON.stringify(step1));
      passkeySerial = step1.detail.serial;
      const options = step1.detail.passkey_registration;
      const created: Json = await page.evaluate(async (o) => {
        const w = window as unknown as Json;
        const cred = await (navigator as unknown as Json).credentials.create({
          publicKey: {
            rp: o.rp,
            user: { id: w.unb64(o.user.id), name: o.user.name, displayName: o.user.displayName },
            challenge: w.textBytes(o.challenge),
            pubKeyCredParams: o.pubKeyCredParams,
            timeout: 30000,
            excludeCredentials: o.excludeCredentials.map((c: Json) => ({
              type: c.type,
              id: w.unb64(c.id),
            })),
            authenticatorSelection: o.authenticatorSelection,
            attestation: o.attestation,
          },
        }) as Json;
        const res = cred.response;
        return {
          sent: w.clientChallenge(res.clientDataJSON),
          body: {
            credential_id: cred.id,
            rawId: w.b64(cred.rawId),
            authenticatorAttachment: cred.authenticatorAttachment ?? "",
            attestationObject: w.b64(res.attestationObject),
            clientDataJSON: w.b64(res.clientDataJSON),
          },
        };
      }, options);
      // the client data carries the challenge text's bytes, as with privacyIDEA's web UI
      assert.equal(created.sent, b64urlOfText(options.challenge));
      const step2 = await api(page, "POST", "/token/init", {
        type: "passkey",
        serial: passkeySerial,
        transaction_id: step1.detail.transaction_id,
        ...created.body,
      }, adminToken);
      assert.equal(step2.status, 200, JSON.stringify(step2));
      assert.equal(step2.detail.rollout_state, "enrolled");
      const { credentials } = await cdp.send("WebAuthn.getCredentials", { authenticatorId });
      assert.ok(credentials.some((c) => c.isResidentCredential), "a discoverable credential");
    });

    await t.step("the passkey logs alice in without a user name", async () => {
      const init = await api(page, "GET", "/validate/initialize?type=passkey");
      assert.equal(init.status, 200, JSON.stringify(init));
      assert.equal(init.result.authentication, "CHALLENGE");
      const pk = init.detail.passkey;
      const asserted: Json = await page.evaluate(async (p) => {
        const w = window as unknown as Json;
        const cred = await (navigator as unknown as Json).credentials.get({
          publicKey: {
            challenge: w.textBytes(p.challenge),
            rpId: p.rpId,
            allowCredentials: [],
            userVerification: p.user_verification,
          },
        }) as Json;
        const res = cred.response;
        return {
          sent: w.clientChallenge(res.clientDataJSON),
          body: {
            credential_id: cred.id,
            clientDataJSON: w.b64(res.clientDataJSON),
            authenticatorData: w.b64(res.authenticatorData),
            signature: w.b64(res.signature),
            userHandle: res.userHandle ? w.b64(res.userHandle) : "",
          },
        };
      }, pk);
      assert.equal(asserted.sent, b64urlOfText(pk.challenge));
      const ok = await api(page, "POST", "/validate/check", {
        transaction_id: pk.transaction_id,
        ...asserted.body,
      });
      assert.equal(ok.status, 200, JSON.stringify(ok));
      assert.equal(ok.result.value, true, JSON.stringify(ok));
      assert.equal(ok.detail.username, "alice");
      assert.equal(ok.detail.serial, passkeySerial);
    });
    await context.close();
  } finally {
    await browser?.close().catch(() => {});
    await served.close();
    await app.close();
  }
});
