/**
 * A smartphone container registered during a login (spec 13 §2.12, privacyIDEA's
 * `enroll_via_multichallenge=smartphone`): after a successful `/validate/check`
 * the user gets the registration QR code as a challenge; the app's finalize
 * answers it, and the login's last check (`transaction_id`, empty `pass`)
 * consumes it.
 *
 * Stricter than privacyIDEA: the last check succeeds only for the container's
 * owner (privacyIDEA accepts any user naming the transaction).
 *
 * @module
 */
import type { Deps } from "../../deps.ts";
import { challengesOfTransaction, consumeTransaction } from "../challenge/mod.ts";
import type { UserRef } from "../token/mod.ts";
import {
  type Container,
  createContainer,
  deleteContainer,
  findContainer,
  getTemplate,
  listContainers,
  reloadContainer,
} from "./mod.ts";
import {
  containerPolicies,
  ENROLLMENT_SESSION,
  initRegistration,
  registrationStateOf,
} from "./smartphone.ts";
import { enrolTemplateTokens } from "./template_tokens.ts";

const DEFAULT_MESSAGE = "Please scan the QR code to register the container.";

/** The authentication policies of the registration, matched on the user who logged in. */
export interface ContainerEnrolmentPolicy {
  /** `enroll_via_multichallenge_text`. */
  text?: string;
  /** `enroll_via_multichallenge_template`: the smartphone template a new container is made from. */
  templateName?: string;
  client: string;
  userAgent: string;
}

/**
 * Starts the registration of `user`'s smartphone container: a new one (from
 * the template, if the policy names a smartphone template) when they have
 * none, the one they have when it is not registered yet. Returns the
 * `multi_challenge` entry of the registration, or undefined when nothing is
 * to be done: a registered container, several containers, or no
 * container-scope `privacyIDEA_server_url` (then a container made here is
 * deleted again and the login keeps its success).
 */
export async function startContainerEnrolment(
  deps: Deps,
  user: UserRef,
  policy: ContainerEnrolmentPolicy,
): Promise<Record<string, unknown> | undefined> {
  const { containers } = await listContainers(deps, {
    owner: { uid: user.uid, realm: user.realm, resolver: user.resolver },
    type: "smartphone",
  });
  let container: Container;
  let templateTokens: unknown[] = [];
  const isNew = containers.length === 0;
  if (isNew) {
    let templateName: string | undefined;
    if (policy.templateName) {
      const template = await getTemplate(deps, policy.templateName);
      if (template?.container_type === "smartphone") {
        templateName = template.name;
        templateTokens = template.template_options.tokens;
      } else {
        // as privacyIDEA: the container is made without it
        deps.log.warn("enroll_via_multichallenge_template names no smartphone template", {
          template: policy.templateName,
        });
      }
    }
    container = await createContainer(deps, { type: "smartphone", owner: user, templateName });
  } else if (containers.length === 1) {
    const state = registrationStateOf(containers[0]);
    if (state !== "" && state !== "client_wait") return undefined;
    container = containers[0];
  } else {
    return undefined;
  }
  const policies = await containerPolicies(deps, container, { client: policy.client });
  if (!policies.serverUrl) {
    deps.log.warn(
      "Missing container registration policy privacyIDEA_server_url: the smartphone container " +
        "is not registered via multichallenge",
      { container: container.serial },
    );
    if (isNew) await deleteContainer(deps, container);
    return undefined;
  }
  if (templateTokens.length > 0) {
    // the user enrols them, with their own enrol rights and enrolment policies
    await enrolTemplateTokens(deps, container, templateTokens, {
      caller: { role: "user", username: user.login, realm: user.realm, resolver: user.resolver },
      callerUser: user,
      client: policy.client,
      userAgent: policy.userAgent,
    });
    container = await reloadContainer(deps, container);
  }
  const value = await initRegistration(deps, container, policies, {}, {
    session: ENROLLMENT_SESSION,
  });
  const url = value.container_url as { value: string; img: string };
  return {
    serial: container.serial,
    type: "smartphone",
    message: policy.text ?? DEFAULT_MESSAGE,
    image: url.img,
    link: url.value,
    client_mode: "poll",
    transaction_id: value.transaction_id,
  };
}

/**
 * The login's last check (privacyIDEA's `check_container_challenge`): the
 * registration challenge of `transactionId` is one the app answered and
 * belongs to a container of `user`. It is consumed (one conditional delete:
 * of parallel checks only one succeeds); the container's serial, or
 * undefined when the transaction is no such challenge.
 */
export async function consumeContainerEnrolment(
  deps: Deps,
  user: UserRef,
  transactionId: string,
): Promise<string | undefined> {
  const now = deps.clock.now();
  const [row] = await challengesOfTransaction(deps, transactionId);
  if (!row || !row.isAnswered || row.expiresAt < now) return undefined;
  if (row.session !== ENROLLMENT_SESSION || !isContainerData(row.data)) return undefined;
  const container = await findContainer(deps, row.serial);
  const owner = container?.owner;
  if (!owner || owner.uid !== user.uid || owner.realm !== user.realm.toLowerCase()) {
    return undefined;
  }
  if (owner.resolver !== user.resolver) return undefined;
  const removed = await consumeTransaction(deps, transactionId);
  return removed.includes(row.serial) ? container!.serial : undefined;
}

function isContainerData(data: string): boolean {
  try {
    const parsed = JSON.parse(data);
    return typeof parsed === "object" && parsed !== null && parsed.type === "container";
  } catch {
    return false;
  }
}
