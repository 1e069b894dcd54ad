/**
 * The `UserNotification` handler: mails a templated text through an SMTP
 * server definition (`/smtpserver/`), sends it as an SMS to the token owner's
 * `mobile` through an SMS gateway (`/smsgateway/`), or saves it to a spool
 * file.
 *
 * @module
 */
import { join, resolve, sep } from "node:path";
import type { Deps } from "../../../deps.ts";
import type { EventContext, HandlerModule, RunDefinition } from "../types.ts";
import { opt } from "../types.ts";
import { escapeHtml, formatTemplate } from "../tags.ts";
import { chosenUser, commonTags, detailOf, resultOf } from "../facts.ts";
import { realmEmails, userAttributes } from "../ports.ts";
import { sendMail, smtpServerIds } from "../../smtp/mod.ts";
import { listSmsGateways, sendSms } from "../../smsgateway/mod.ts";
import { listAdmins } from "../../admin/mod.ts";
import { randomString } from "../../../lib/random.ts";

const DEFAULT_SUBJECT = "An action was performed on your token.";
const DEFAULT_BODY = "Hello {user},\n\n" +
  "the administrator {admin}@{realm} performed the action\n" +
  "{action} on your token {serial}.\n\n" +
  "To check your tokens you may login to the Web UI:\n{url}\n";
const RECIPIENTS = ["tokenowner", "logged_in_user", "internal admin", "admin realm", "email"];
const ALNUM = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789";
const EMAIL_REGEXP = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;

function recipientOptions(prefix: string): Record<string, ReturnType<typeof opt>> {
  return {
    [`${prefix} tokenowner`]: opt("str", "The user attribute holding the address", {
      visibleIf: prefix,
      visibleValue: "tokenowner",
    }),
    [`${prefix} logged_in_user`]: opt("str", "The user attribute holding the address", {
      visibleIf: prefix,
      visibleValue: "logged_in_user",
    }),
    [`${prefix} internal admin`]: opt("str", "The name of the internal admin", {
      visibleIf: prefix,
      visibleValue: "internal admin",
    }),
    [`${prefix} admin realm`]: opt("str", "A superuser realm", {
      visibleIf: prefix,
      visibleValue: "admin realm",
    }),
    [`${prefix} email`]: opt("str", "Comma separated list of addresses", {
      visibleIf: prefix,
      visibleValue: "email",
    }),
  };
}

function sub(obj: Record<string, unknown>, key: string, field: string): string | undefined {
  const v = obj[key];
  if (v && typeof v === "object") {
    const f = (v as Record<string, unknown>)[field];
    return typeof f === "string" ? f : undefined;
  }
  return undefined;
}

async function recipients(
  deps: Deps,
  def: RunDefinition,
  ctx: EventContext,
  prefix: string,
): Promise<{ addresses: string[]; givenname?: string; surname?: string }> {
  const choice = def.options[prefix] ?? "";
  const detail = def.options[`${prefix} ${choice}`] ?? "";
  if (choice === "tokenowner" || choice === "logged_in_user") {
    const user = await chosenUser(deps, ctx, choice);
    if (!user) return { addresses: [] };
    const info = await userAttributes(deps, user);
    const addr = info[detail || "email"] ?? "";
    return {
      addresses: EMAIL_REGEXP.test(addr) ? [addr] : [],
      givenname: info.givenname,
      surname: info.surname,
    };
  }
  if (choice === "internal admin") {
    const admin = (await listAdmins(deps)).find((a) => a.username === detail);
    return { addresses: admin && EMAIL_REGEXP.test(admin.email) ? [admin.email] : [] };
  }
  if (choice === "email") {
    return {
      addresses: detail.split(",").map((s) => s.trim()).filter((s) => EMAIL_REGEXP.test(s)),
    };
  }
  if (choice === "admin realm") {
    // only a configured superuser realm, never an arbitrary realm's user list
    if (!deps.config.auth.superuserRealms.includes(detail)) return { addresses: [] };
    const all = await realmEmails(deps, detail);
    return { addresses: all.filter((a) => EMAIL_REGEXP.test(a)) };
  }
  return { addresses: [] };
}

async function tags(
  deps: Deps,
  ctx: EventContext,
  recipient: { givenname?: string; surname?: string },
): Promise<Record<string, string | undefined>> {
  const detail = detailOf(ctx);
  const value = resultOf(ctx).value;
  const containerUrl = value && typeof value === "object"
    ? (value as Record<string, unknown>).container_url as Record<string, unknown> | undefined
    : undefined;
  return {
    ...(await commonTags(deps, ctx)),
    recipient_givenname: recipient.givenname,
    recipient_surname: recipient.surname,
    registrationcode: typeof detail.registrationcode === "string"
      ? detail.registrationcode
      : undefined,
    googleurl_value: sub(detail, "googleurl", "value"),
    googleurl_img: sub(detail, "googleurl", "img"),
    pushurl_value: sub(detail, "pushurl", "value"),
    pushurl_img: sub(detail, "pushurl", "img"),
    container_serial: typeof ctx.request.params.container_serial === "string"
      ? ctx.request.params.container_serial
      : undefined,
    container_url_value: typeof containerUrl?.value === "string" ? containerUrl.value : undefined,
    container_url_img: typeof containerUrl?.img === "string" ? containerUrl.img : undefined,
    pin: typeof detail.pin === "string" ? detail.pin : undefined,
    challenge: typeof detail.challenge === "string" ? detail.challenge : undefined,
  };
}

/** UserNotification / sendmail, savefile. */
export const userNotificationHandler: HandlerModule = {
  id: "UserNotification",
  positions: ["post", "pre"],
  defaultAbort: false,
  async actions(deps) {
    return {
      sendmail: {
        emailconfig: opt("str", "The SMTP server definition", {
          required: true,
          value: await smtpServerIds(deps),
        }),
        mimetype: opt("str", "Send the body as plain text or HTML", { value: ["plain", "html"] }),
        subject: opt("str", "The subject of the mail"),
        body: opt("text", "The body of the mail; tags like {serial} are replaced"),
        To: opt("str", "The recipient", { required: true, value: RECIPIENTS }),
        ...recipientOptions("To"),
        reply_to: opt("str", "The Reply-To address", { value: ["", ...RECIPIENTS] }),
        ...recipientOptions("reply_to"),
      },
      sendsms: {
        smsconfig: opt("str", "Send the user notification via a predefined SMS gateway.", {
          required: true,
          value: (await listSmsGateways(deps)).map((g) => g.name),
        }),
        body: opt("text", "The text of the SMS; tags like {serial} are replaced"),
        To: opt("str", "Send notification to this user.", {
          required: true,
          value: ["tokenowner"],
        }),
      },
      savefile: {
        body: opt("text", "The file content; tags like {serial} are replaced", { required: true }),
        filename: opt("str", "The file name in the spool directory; {random} adds 16 characters", {
          required: true,
        }),
      },
    };
  },
  async run(deps, def, ctx) {
    if (def.action === "savefile") return await saveFile(deps, def, ctx);
    if (def.action === "sendsms") return await sendSmsNotification(deps, def, ctx);
    if (def.action !== "sendmail") return { success: false };
    const to = await recipients(deps, def, ctx, "To");
    if (to.addresses.length === 0) {
      // nobody to notify (e.g. the token has no owner): nothing to do
      deps.log.info("UserNotification: no recipient", { definition: def.name });
      return { success: true };
    }
    const html = def.options.mimetype === "html";
    const values = await tags(deps, ctx, to);
    const escape = html ? escapeHtml : undefined;
    const subject = formatTemplate(def.options.subject || DEFAULT_SUBJECT, values, { escape });
    const body = formatTemplate(def.options.body || DEFAULT_BODY, values, { escape });
    const replyTo = def.options.reply_to
      ? (await recipients(deps, def, ctx, "reply_to")).addresses[0]
      : undefined;
    try {
      await sendMail(deps, def.options.emailconfig ?? "", {
        to: to.addresses,
        subject,
        body,
        html,
        replyTo,
      });
      return { success: true };
    } catch (err) {
      deps.log.warn("UserNotification: sending failed", {
        definition: def.name,
        error: (err as Error).message,
      });
      return { success: false, details: `Failed: ${to.addresses.join(", ")}.` };
    }
  },
};

/** `sendsms`: the text to the token owner's `mobile` through the gateway `smsconfig`. */
async function sendSmsNotification(deps: Deps, def: RunDefinition, ctx: EventContext) {
  // privacyIDEA offers only the token owner as recipient of an SMS
  const owner = await chosenUser(deps, ctx, "tokenowner");
  const info = owner ? await userAttributes(deps, owner) : {};
  const phone = info.mobile ?? "";
  const text = formatTemplate(
    def.options.body || DEFAULT_BODY,
    await tags(deps, ctx, info),
  );
  if (!owner || phone === "") {
    deps.log.warn("UserNotification: no mobile number to send the SMS to", {
      definition: def.name,
    });
    return { success: false };
  }
  try {
    await sendSms(deps, def.options.smsconfig ?? "", phone, text);
    return { success: true };
  } catch (err) {
    deps.log.warn("UserNotification: sending the SMS failed", {
      definition: def.name,
      error: (err as Error).message,
    });
    return { success: false };
  }
}

async function saveFile(deps: Deps, def: RunDefinition, ctx: EventContext) {
  const spool = resolve(deps.config.storage.dataDir, "notifications");
  const values = {
    ...(await tags(deps, ctx, {})),
    random: randomString(deps.random, 16, ALNUM),
  };
  const filename = formatTemplate(def.options.filename ?? "", values);
  const target = resolve(spool, filename);
  // the file must stay inside the spool directory
  if (!filename || !target.startsWith(spool + sep)) {
    deps.log.warn("UserNotification: file name escapes the spool directory", {
      definition: def.name,
    });
    return { success: false };
  }
  try {
    await Deno.mkdir(join(target, ".."), { recursive: true });
    await Deno.writeTextFile(target, formatTemplate(def.options.body ?? "", values));
    return { success: true };
  } catch (err) {
    deps.log.warn("UserNotification: cannot write file", { error: (err as Error).message });
    return { success: false };
  }
}
