/**
 * The u2f token's policy actions (spec 14 §8.2): each against its baseline, over HTTP, with
 * tokens seeded as a privacyIDEA migration leaves them and answers signed by a test key.
 */
import assert from "node:assert/strict";
import { jsonOf } from "../test_app.ts";
import { addPolicy, setConfig } from "../http/_challenge_types.ts";
import {
  newKey,
  seedU2f,
  signAnswer,
  tokenState,
  u2fApp,
  u2fChallenge,
  u2fCheck,
  VECTOR,
} from "../http/_u2f.ts";
import { actionTest } from "./_registry.ts";

const APP_ID = "https://u2f.example.com";

actionTest(
  "authentication",
  "u2f_challenge_text",
  "the challenge message is the policy's text (\\, a comma) instead of the default",
  async () => {
    const { t } = await u2fApp();
    try {
      await seedU2f(t, { serial: "U2FTXT", pubKeyHex: newKey().pubKeyHex, appId: APP_ID });
      const plain = await u2fChallenge(t);
      assert.equal(
        plain.body.detail.message,
        `Please confirm with your U2F token (${VECTOR.description})`,
      );
      await addPolicy(t, "u2ftext", {
        scope: "authentication",
        action: "u2f_challenge_text=Touch your key\\, please",
      });
      const custom = await u2fChallenge(t);
      assert.equal(custom.body.detail.message, "Touch your key, please");
      assert.equal(custom.entry.message, "Touch your key, please");
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "authentication",
  "u2f_facets",
  "GET /ttype/u2f lists https://<host> for each host name before the appId",
  async () => {
    const { t } = await u2fApp();
    try {
      await setConfig(t, { "u2f.appId": APP_ID });
      const ids = async () => (await (await t.get("/ttype/u2f")).json()).trustedFacets[0].ids;
      assert.deepEqual(await ids(), [APP_ID]);
      await addPolicy(t, "facets", {
        scope: "authentication",
        action: "u2f_facets=a.example b.example",
      });
      assert.deepEqual(await ids(), ["https://a.example", "https://b.example", APP_ID]);
    } finally {
      await t.close();
    }
  },
);

actionTest(
  "authorization",
  "u2f_req",
  "a device whose attestation does not match is refused with ERR303 after a valid answer",
  async () => {
    const { t } = await u2fApp();
    try {
      const key = newKey();
      await seedU2f(t, { serial: "U2FREQ", pubKeyHex: key.pubKeyHex, appId: APP_ID });
      const answer = async (counter: number) => {
        const c = await u2fChallenge(t);
        return await u2fCheck(t, {
          user: "alice",
          pass: "",
          transaction_id: c.tid,
          ...signAnswer(key, {
            appId: APP_ID,
            challenge: c.entry.attributes.u2fSignRequest.challenge,
            counter,
          }),
        });
      };
      // baseline: no policy, the device authenticates
      assert.equal((await answer(1)).body.result.value, true);
      await addPolicy(t, "only_feitian", {
        scope: "authorization",
        action: "u2f_req=subject/.*Feitian.*/",
      });
      const refused = await answer(2);
      assert.equal(refused.status, 403, JSON.stringify(refused.body));
      assert.equal(refused.body.result.error.code, 303);
      assert.equal(
        refused.body.result.error.message,
        "The U2F device is not allowed to authenticate due to policy restriction.",
      );
      // a rule the device's certificate matches (issuer and serial) lets it through
      await addPolicy(t, "only_feitian", {
        scope: "authorization",
        action: "u2f_req=issuer/.*Yubico.*/ serial/^1432534688$/",
      });
      const ok = await answer(3);
      assert.equal(ok.body.result.value, true, JSON.stringify(ok.body));
      assert.equal((await tokenState(t, "U2FREQ")).count, 3);
      const list = await jsonOf(await t.asAdmin("GET", "/token/", { query: { serial: "U2FREQ" } }));
      assert.equal(list.body.result.value.tokens[0].info.attestation_serial, "1432534688");
    } finally {
      await t.close();
    }
  },
);
