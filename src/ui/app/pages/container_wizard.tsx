/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * The container wizard (policies container_wizard_type, container_wizard_template and
 * container_wizard_registration): a user who logs in without a container sees only this page
 * until they have one. It creates a container of the policy's type (from its template, whose
 * tokens are enrolled with it and shown to scan) and, when asked and allowed
 * (`container_register`), registers it with the privacyIDEA Authenticator app: the QR code,
 * then the registration state read again until the app has scanned it.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { api, get, messageOf } from "../api.ts";
import { type ContainerWizard, hasRight, useSession } from "../session.ts";
import { Field, Form, LoadState, Outcome, Page, Panel, useAction, useLoad } from "../ui.tsx";
import { type Registration, RegistrationQr } from "./containers.tsx";
import { EnrollResult } from "./enroll.tsx";

/** How often the wizard asks whether the app has registered the container. */
const POLL_MS = 2500;

/** A container as far as the wizard reads it from `GET /container/`. */
interface Listed {
  serial: string;
  type: string;
  info?: Record<string, string>;
}

// deno-lint-ignore no-explicit-any
type Detail = any;

/** What the wizard made: the container, its template's tokens, its registration. */
interface Made {
  serial: string;
  tokens: Record<string, Detail>;
  registration?: Registration;
  /** Why the registration could not start. */
  registrationError?: string;
}

/** `#/…` of a user whose login answer enabled the container wizard. */
export function ContainerWizardPage(props: { wizard: ContainerWizard }) {
  const { session } = useSession();
  const canList = hasRight(session, "container_list");
  // after a reload the container may already be made: the wizard is then done
  const existing = useLoad(
    () =>
      canList
        ? get<{ containers: Listed[] }>("/container/", { page: 1, pagesize: 1 })
        : Promise.resolve({ containers: [] }),
    [],
  );
  const [made, setMade] = useState<Made | undefined>(undefined);
  const first = existing.data?.containers[0];
  return (
    <Page title="Set up your container">
      <LoadState error={existing.error} loading={existing.loading && !existing.data} />
      {made
        ? <WizardDone made={made} wizard={props.wizard} />
        : first
        ? <WizardDone made={{ serial: first.serial, tokens: {} }} wizard={props.wizard} />
        : existing.data && <WizardForm wizard={props.wizard} onMade={setMade} />}
    </Page>
  );
}

/** The one choice left: a description; type and template are the policy's. */
function WizardForm(props: { wizard: ContainerWizard; onMade: (m: Made) => void }) {
  const { session } = useSession();
  const [description, setDescription] = useState("");
  const act = useAction();
  const w = props.wizard;
  if (!hasRight(session, "container_create")) {
    return (
      <Panel title="Your container">
        <p>
          You need a {w.type} container, but you may not create one. Please ask your administrator.
        </p>
      </Panel>
    );
  }
  const register = w.registration && w.type === "smartphone" &&
    hasRight(session, "container_register");
  return (
    <Panel title="Your container">
      <p data-testid="wizard-intro">
        Before you go on, create your {w.type} container
        {w.template ? ` from the template ${w.template}` : ""}
        {register ? " and register it with the privacyIDEA Authenticator app" : ""}.
      </p>
      <Form
        label="Create your container"
        onSubmit={() =>
          act.run(async () => {
            const { value } = await api<
              { container_serial: string; tokens?: Record<string, Detail> }
            >(
              "POST",
              "/container/init",
              {
                type: w.type,
                description,
                ...(w.template ? { template_name: w.template } : {}),
              },
            );
            const m: Made = { serial: value.container_serial, tokens: value.tokens ?? {} };
            if (register) {
              try {
                m.registration = (await api<Registration>(
                  "POST",
                  "/container/register/initialize",
                  { container_serial: m.serial },
                )).value;
              } catch (err) {
                // the container exists even when its registration could not start
                m.registrationError = messageOf(err);
              }
            }
            props.onMade(m);
          })}
      >
        <Field label="Container type" value={w.type} onValue={() => {}} disabled />
        {w.template && <Field label="Template" value={w.template} onValue={() => {}} disabled />}
        <Field
          label="Description"
          value={description}
          onValue={setDescription}
          hint="Optional: e.g. the device the container is for"
        />
        <button type="submit" class="primary" disabled={act.busy}>Create container</button>
        <Outcome error={act.error} note={act.note} />
      </Form>
    </Panel>
  );
}

/**
 * The made container: its template's tokens to scan, and the registration's QR code while the
 * app has not registered it (the state read every few seconds, with `container_list`).
 */
function WizardDone(props: { made: Made; wizard: ContainerWizard }) {
  const { session, logout } = useSession();
  const { serial, registration, tokens } = props.made;
  const canList = hasRight(session, "container_list");
  const [state, setState] = useState<string | undefined>(undefined);
  const waiting = registration !== undefined && state !== "registered";
  useEffect(() => {
    if (!waiting || !canList) return;
    let timer: ReturnType<typeof setTimeout>;
    let live = true;
    const poll = async () => {
      try {
        const { containers } = await get<{ containers: Listed[] }>("/container/", {
          container_serial: serial,
        });
        if (!live) return;
        setState(containers[0]?.info?.registration_state);
      } catch {
        // the next poll tries again; the page stays as it is
      }
      if (live) timer = setTimeout(poll, POLL_MS);
    };
    timer = setTimeout(poll, POLL_MS);
    return () => {
      live = false;
      clearTimeout(timer);
    };
  }, [serial, waiting, canList]);
  const wanted = props.wizard.registration && props.wizard.type === "smartphone";
  return (
    <>
      <Panel title="Your container">
        <p class="note" role="status" data-testid="wizard-done">
          Your container <strong>{serial}</strong> is created.
          {state === "registered" ? " Registration completed successfully." : ""}
        </p>
        {registration && state !== "registered" && (
          <RegistrationQr serial={serial} registration={registration} />
        )}
        {props.made.registrationError && (
          <p class="error" role="alert">
            The registration could not start: {props.made.registrationError}
          </p>
        )}
        {wanted && !registration && !hasRight(session, "container_register") && (
          <p class="muted">
            You may not register it with the app yourself: ask your administrator.
          </p>
        )}
        <div class="actions">
          <button type="button" class="primary" onClick={logout}>Finish and log out</button>
        </div>
      </Panel>
      {Object.entries(tokens).map(([s, d]) => (
        <EnrollResult key={s} type={String(d.type ?? "")} detail={{ serial: s, ...d }} />
      ))}
    </>
  );
}
