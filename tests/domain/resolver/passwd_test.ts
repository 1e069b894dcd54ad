import assert from "node:assert/strict";
import { parsePasswd, passwdResolver, starMatch } from "../../../src/domain/resolver/passwd.ts";
import { shaCrypt } from "../../../src/lib/unix_crypt.ts";

const CORNELIUS =
  "cornelius:x:1000:1000:Cornelius,field2,+491111111,+491234566,user@localhost.localdomain::";

Deno.test("parsePasswd reads GECOS fields as spec 03 §2.1 describes", () => {
  const [c, h] = parsePasswd(`${CORNELIUS}\n\nhans:x:1001:1001:Hans Peter Meier,room::\n`);
  assert.deepEqual(c.info, {
    username: "cornelius",
    userid: "1000",
    givenname: "Cornelius",
    surname: "",
    email: "user@localhost.localdomain",
    phone: "+491234566",
    mobile: "+491111111",
    description: "Cornelius,field2,+491111111,+491234566,user@localhost.localdomain",
  });
  assert.equal(h.info.givenname, "Hans");
  assert.equal(h.info.surname, "Peter Meier");
  assert.equal(h.info.mobile, "");
  assert.equal(h.info.email, "");
});

Deno.test("starMatch treats only * as a wildcard", () => {
  assert.equal(starMatch("a*", "abc"), true);
  assert.equal(starMatch("*c", "abc"), true);
  assert.equal(starMatch("*b*", "abc"), true);
  assert.equal(starMatch("a.c", "abc"), false);
  assert.equal(starMatch("a%", "abc"), false);
  assert.equal(starMatch("abc", "abc"), true);
});

Deno.test("passwdResolver looks users up, searches, checks passwords and re-reads a changed file", async () => {
  const dir = await Deno.makeTempDir();
  const path = `${dir}/passwd`;
  try {
    const hash = shaCrypt("6", "pw1", "saltsalt");
    await Deno.writeTextFile(
      path,
      `${CORNELIUS}\nanna:${hash}:1001:1001:Anna A,,,,anna@x.org::\nlocked:*:1002:1::\n`,
    );
    const r = passwdResolver("p", path);
    assert.equal(r.editable, false);
    assert.equal(await r.getUserId("anna"), "1001");
    assert.equal(await r.getUserId("nobody"), undefined);
    assert.equal((await r.getUserInfo("1001"))?.email, "anna@x.org");
    assert.equal(await r.checkPass("1001", "pw1"), true);
    assert.equal(await r.checkPass("1001", "pw2"), false);
    assert.equal(await r.checkPass("1000", "x"), false);
    assert.equal(await r.checkPass("1002", "*"), false);
    const names = async (s: Record<string, string>) =>
      (await r.getUserList(s)).map((u) => u.username);
    assert.deepEqual(await names({ username: "*n*" }), ["cornelius", "anna"]);
    assert.deepEqual(await names({ userid: ">1000" }), ["anna", "locked"]);
    assert.deepEqual(await names({ userid: "between 1000,1001" }), ["cornelius", "anna"]);
    assert.deepEqual(await names({ userid: "<=1000" }), ["cornelius"]);
    assert.deepEqual(await names({ email: "*@x.org" }), ["anna"]);
    assert.deepEqual(await names({ givenname: "Anna" }), []);
    await assert.rejects(() => r.addUser({ username: "x" }), /not editable/);

    // a changed file is picked up without a restart
    await new Promise((res) => setTimeout(res, 20));
    await Deno.writeTextFile(path, `newbie:x:2000:2000:New Bie::\n`);
    assert.equal(await r.getUserId("anna"), undefined);
    assert.equal(await r.getUserId("newbie"), "2000");
    assert.equal((await r.test()).success, true);
    assert.equal((await passwdResolver("q", `${dir}/missing`).test()).success, false);
  } finally {
    await Deno.remove(dir, { recursive: true });
  }
});
