import assert from "node:assert/strict";
import { readBodyPrefix } from "../../src/lib/read_body.ts";

function streamed(parts: string[]): { res: Response; pulled: () => number } {
  let pulled = 0;
  const enc = new TextEncoder();
  const body = new ReadableStream<Uint8Array>({
    pull(controller) {
      if (pulled === parts.length) controller.close();
      else controller.enqueue(enc.encode(parts[pulled++]));
    },
  });
  return { res: new Response(body), pulled: () => pulled };
}

Deno.test("readBodyPrefix: a short body whole, across chunks", async () => {
  const { res } = streamed(["status=", "OK\n", "h=abc\n"]);
  assert.deepEqual(await readBodyPrefix(res, 100), {
    text: "status=OK\nh=abc\n",
    isTruncated: false,
  });
  assert.deepEqual(await readBodyPrefix(new Response(null), 10), { text: "", isTruncated: false });
});

Deno.test("readBodyPrefix: a long body stops at the limit and is not read further", async () => {
  const { res, pulled } = streamed(["aaaa", "bbbb", "cccc", "dddd", "eeee"]);
  const out = await readBodyPrefix(res, 6);
  assert.deepEqual(out, { text: "aaaabb", isTruncated: true });
  assert.ok(pulled() < 5, `read ${pulled()} of 5 chunks`);
  // exactly the limit is not more than it
  assert.deepEqual(await readBodyPrefix(new Response("123456"), 6), {
    text: "123456",
    isTruncated: false,
  });
});
