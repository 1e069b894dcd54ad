/**
 * The SMTP SMS provider (spec 14 §21.1): the SMS goes as a plain-text mail
 * through an `/smtpserver/` definition (SMTPIDENTIFIER) to a mail-to-SMS
 * gateway. MAILTO, SUBJECT (default `{phone}`) and BODY (default `{otp}`)
 * are Python format strings with the tags `{phone}` (the number after
 * REGEXP) and `{otp}` (the whole SMS text); another tag is refused when the
 * definition is saved. A failed delivery reads as privacyIDEA's
 * `Failed to deliver SMS to SMTP Gateway.`
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { sendMail } from "../smtp/mod.ts";
import { formatTemplate } from "../event/tags.ts";
import { SmsDeliveryError } from "./http_provider.ts";

/** The parameter description of `GET /smsgateway/providers`, with the SMTP definitions. */
export function smtpSmsParameters(smtpIds: string[]): Record<string, Record<string, unknown>> {
  return {
    MAILTO: {
      required: true,
      description: "The recipient of the email. Use tags {phone} and {otp}.",
    },
    SMTPIDENTIFIER: {
      required: true,
      description: "Your SMTP configuration, that should be used to send the email.",
      values: smtpIds,
    },
    SUBJECT: { description: "The optional subject of the email. Use tags {phone} and {otp}." },
    BODY: {
      description: "The optional body of the email. Use tags {phone} and {otp}.",
      type: "text",
    },
    REGEXP: {
      description:
        "Regular expression to modify the phone number to make it compatible with the provider. For example to remove pluses and slashes enter something like '/[\\+/]//'.",
    },
  };
}

const FAILED = "Failed to deliver SMS to SMTP Gateway.";
const EMAIL_REGEXP = /^[^\s@<>,;"]+@[^\s@<>,;"]+$/;

function fill(template: string, phone: string, text: string): string {
  return formatTemplate(template, { phone, otp: text });
}

/** Problems of a definition's options (empty: fine), each naming its option. */
export function smtpSmsOptionProblems(
  options: Record<string, string>,
  smtpIds: string[],
): string[] {
  const problems: string[] = [];
  for (const key of ["MAILTO", "SMTPIDENTIFIER"]) {
    if (!options[key]) problems.push(`Missing parameter: option.${key}`);
  }
  if (options.SMTPIDENTIFIER && !smtpIds.includes(options.SMTPIDENTIFIER)) {
    problems.push(
      `Cannot parse parameter "option.SMTPIDENTIFIER": no SMTP server "${
        options.SMTPIDENTIFIER.slice(0, 100)
      }"`,
    );
  }
  for (const key of ["MAILTO", "SUBJECT", "BODY"]) {
    if (options[key] === undefined) continue;
    try {
      fill(options[key], "+491701234567", "123456");
    } catch (err) {
      problems.push(
        `Cannot parse parameter "option.${key}": ${(err as Error).message} (tags: {phone}, {otp})`,
      );
    }
  }
  if (options.MAILTO && problems.length === 0) {
    const sample = fill(options.MAILTO, "491701234567", "123456");
    if (!EMAIL_REGEXP.test(sample)) {
      problems.push(`Cannot parse parameter "option.MAILTO": expected an email address`);
    }
  }
  return problems;
}

/**
 * Mails `text` for `phone` through the definition's SMTP server; throws
 * {@link SmsDeliveryError} on failure.
 */
export async function sendSmtpSms(
  deps: Deps,
  options: Record<string, string>,
  phone: string,
  text: string,
): Promise<void> {
  let to: string, subject: string, body: string;
  try {
    to = fill(options.MAILTO ?? "", phone, text);
    // a line break in the SMS text must not end the Subject header
    subject = fill(options.SUBJECT ?? "{phone}", phone, text).replace(/[\r\n]+/g, " ");
    body = fill(options.BODY ?? "{otp}", phone, text);
  } catch (err) {
    throw new SmsDeliveryError(`${FAILED} ${(err as Error).message}`);
  }
  if (!EMAIL_REGEXP.test(to)) throw new SmsDeliveryError(`${FAILED} Not an address: "${to}"`);
  try {
    await sendMail(deps, options.SMTPIDENTIFIER ?? "", { to: [to], subject, body });
  } catch (err) {
    throw new SmsDeliveryError(`${FAILED} ${(err as Error).message}`);
  }
}
