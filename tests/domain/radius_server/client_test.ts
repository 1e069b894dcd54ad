import assert from "node:assert/strict";
import { sendAccessRequest } from "../../../src/domain/radius_server/client.ts";
import { secureRandom } from "../../../src/lib/random.ts";
import { memoryLogger } from "../../../src/lib/logger.ts";
import { startResponder } from "./responder.ts";

function target(port: number, secret: string) {
  return {
    server: "127.0.0.1",
    port,
    secret,
    retries: 1,
    timeout: 1,
    messageAuthenticator: false,
  };
}

const random = secureRandom;

Deno.test("sendAccessRequest ignores replies signed with another secret (then times out)", async () => {
  // the responder decodes with its own secret and signs its replies with it
  const responder = await startResponder("responder-secret", () => ({ code: "Access-Accept" }));
  const log = memoryLogger();
  try {
    const answer = await sendAccessRequest(target(responder.port, "client-secret"), {
      userName: "u",
      password: "p",
    }, { random, log });
    assert.equal(answer.result, "timeout");
    assert.ok(log.lines.some((l) => l.includes("bad Response Authenticator")));
  } finally {
    await responder.close();
  }
});

Deno.test("sendAccessRequest: a reply without Message-Authenticator is an error when required", async () => {
  const responder = await startResponder("s", (req) => {
    assert.equal(req.hasMessageAuthenticator, true);
    return { code: "Access-Accept", withoutMessageAuthenticator: true };
  });
  try {
    const required = { ...target(responder.port, "s"), messageAuthenticator: true };
    await assert.rejects(
      sendAccessRequest(required, { userName: "u", password: "p" }, { random }),
      { code: 10, message: /Message-Authenticator of the RADIUS reply .* is missing/ },
    );
  } finally {
    await responder.close();
  }
});

Deno.test("sendAccessRequest answers 'error' quickly for an unresolvable host", async () => {
  const started = performance.now();
  const answer = await sendAccessRequest(
    {
      ...target(1812, "s"),
      server: "no-such-host.invalid",
      timeout: 5,
    },
    { userName: "u", password: "p" },
    { random },
  );
  assert.ok(["error", "timeout"].includes(answer.result));
  assert.ok(performance.now() - started < 5500);
});

Deno.test("sendAccessRequest refuses passwords longer than 128 bytes", async () => {
  await assert.rejects(
    sendAccessRequest(target(1812, "s"), { userName: "u", password: "x".repeat(129) }, { random }),
    /longer than 128 bytes/,
  );
});
