/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Enrolment: the form (`POST /token/init`), the QR code to scan, and the
 * second step when policy asks for one (first OTP, or the app's key part).
 *
 * @module
 */
import { useState } from "preact/hooks";
import { api, get } from "../api.ts";
import { hasRight, rightValue, useSession } from "../session.ts";
import {
  Check,
  Field,
  Form,
  href,
  LoadState,
  Outcome,
  Page,
  Panel,
  type Route,
  Select,
  useAction,
  useLoad,
} from "../ui.tsx";

// deno-lint-ignore no-explicit-any
type Detail = any;

const SRC_REGEXP = /src="([^"]+)"/;

/**
 * A push token's enrolment: the QR code and URL of `detail.pushurl` for the
 * app, and the token's state, which becomes `enrolled` only when the app has
 * registered at `/ttype/push` (read again with `GET /token/`).
 */
function PushEnrolment(
  props: { detail: Detail; state: string; onState: (state: string) => void },
) {
  const d = props.detail;
  const act = useAction();
  const url: string | undefined = d.pushurl?.value;
  const img = typeof d.pushurl?.img === "string" ? d.pushurl.img.match(SRC_REGEXP)?.[1] : "";
  const waiting = props.state === "clientwait";
  return (
    <>
      {url && (
        <figure class="qr">
          {img && (
            <img
              src={img}
              width={220}
              height={220}
              alt={`QR code of push token ${d.serial}: scan it with the privacyIDEA Authenticator app`}
              data-otpauth={url}
            />
          )}
          <figcaption>
            Scan the QR code with the privacyIDEA Authenticator app.{" "}
            <a href={url} class="otpauth" data-otpauth={url}>Open in the app</a>
            <br />
            Enrolment URL: <code class="secret" data-testid="pushurl">{url}</code>
          </figcaption>
        </figure>
      )}
      <p class="note" role="status" data-testid="rollout-state">
        {waiting
          ? "The token waits for the app (rollout state clientwait): it is enrolled once the app has registered."
          : props.state === "enrolled"
          ? "The app has registered: the token is enrolled and ready to use."
          : `Rollout state: ${props.state || "none"}.`}
      </p>
      {waiting && (
        <button
          type="button"
          disabled={act.busy}
          onClick={() =>
            act.run(async () => {
              const r = await get<{ tokens: { rollout_state?: string }[] }>("/token/", {
                serial: d.serial,
              });
              const token = r.tokens?.[0];
              if (!token) throw new Error(`Token ${d.serial} is not listed any more.`);
              props.onState(token.rollout_state ?? "");
            })}
        >
          Refresh the token's state
        </button>
      )}
      <Outcome error={act.error} />
    </>
  );
}

/** What `POST /token/init` answered, shown to the person enrolling. */
export function EnrollResult(props: { type: string; detail: Detail; onDone?: () => void }) {
  const { session } = useSession();
  const d = props.detail;
  const act = useAction();
  const [otp, setOtp] = useState("");
  const [clientPart, setClientPart] = useState("");
  const [state, setState] = useState<string>(d.rollout_state ?? "");
  const isPush = props.type === "push";
  const url: string | undefined = d.googleurl?.value;
  const img = typeof d.googleurl?.img === "string" ? d.googleurl.img.match(SRC_REGEXP)?.[1] : "";
  const b32: string | undefined = d.otpkey?.value_b32;
  return (
    <Panel title={`Token ${d.serial}`}>
      {url && (
        <figure class="qr">
          {img && (
            <img
              src={img}
              width={220}
              height={220}
              alt={`QR code of token ${d.serial}: scan it with your authenticator app`}
              data-otpauth={url}
            />
          )}
          <figcaption>
            {
              // the key as text only with policy show_seed (privacyIDEA shows the QR code alone)
              session.settings.showSeed && b32
                ? (
                  <>
                    Scan the QR code with an authenticator app, or add the key by hand:{" "}
                    <code class="secret" data-testid="seed">{b32}</code>.{" "}
                  </>
                )
                : <>Scan the QR code with an authenticator app.{" "}</>
            }
            <a href={url} class="otpauth" data-otpauth={url}>Open in an authenticator app</a>
          </figcaption>
        </figure>
      )}
      {isPush && <PushEnrolment detail={d} state={state} onState={setState} />}
      {d.registrationcode && (
        <p>
          Registration code: <code class="secret">{d.registrationcode}</code>
        </p>
      )}
      {d.otps && (
        <ol class="otps" start={0} aria-label="One-time passwords">
          {Object.entries(d.otps as Record<string, string>).map(([k, v]) => <li key={k}>{v}</li>)}
        </ol>
      )}
      {state === "verify" && (
        <Form
          label="Verify the new token"
          onSubmit={() =>
            act.run(async () => {
              const r = await api("POST", "/token/init", {
                type: props.type,
                serial: d.serial,
                verify: otp,
              });
              setState(r.detail?.rollout_state ?? "enrolled");
              props.onDone?.();
            }, "The token is verified and ready to use")}
        >
          <p>Enter the first one-time password the app shows to finish the enrolment.</p>
          <Field
            label="One-time password"
            value={otp}
            onValue={setOtp}
            inputMode="numeric"
            autoComplete="one-time-code"
            required
          />
          <button type="submit" class="primary" disabled={act.busy}>Verify</button>
        </Form>
      )}
      {state === "clientwait" && !isPush && (
        <Form
          label="Finish the two-step enrolment"
          onSubmit={() =>
            act.run(async () => {
              const r = await api("POST", "/token/init", {
                type: props.type,
                serial: d.serial,
                otpkey: clientPart,
              });
              setState(r.detail?.rollout_state ?? "enrolled");
              props.onDone?.();
            }, "The token is ready to use")}
        >
          <p>The app shows its part of the key after scanning: enter it here.</p>
          <Field label="Key part of the app" value={clientPart} onValue={setClientPart} required />
          <button type="submit" class="primary" disabled={act.busy}>Finish enrolment</button>
        </Form>
      )}
      {state !== "verify" && state !== "clientwait" && !act.note && !isPush && (
        <p class="note" role="status">The token is enrolled.</p>
      )}
      <Outcome error={act.error} note={act.note} />
    </Panel>
  );
}

/**
 * The enrolment form. Admins name the owner (or none); a user enrols for
 * themselves, always with a key generated by the server.
 */
export function EnrollForm(
  props: { user?: string; realm?: string; self?: boolean; onEnrolled?: () => void },
) {
  const { session } = useSession();
  const types = useLoad(() => get<Record<string, string>>("/auth/rights"), []);
  const [type, setType] = useState("");
  const [user, setUser] = useState(props.user ?? "");
  const [realm, setRealm] = useState(props.realm ?? "");
  const [description, setDescription] = useState("");
  const [pin, setPin] = useState("");
  const [genkey, setGenkey] = useState(true);
  const [otpkey, setOtpkey] = useState("");
  const [otplen, setOtplen] = useState("6");
  const [hashlib, setHashlib] = useState("sha1");
  const [timeStep, setTimeStep] = useState("30");
  const [twoStep, setTwoStep] = useState(false);
  const [extra, setExtra] = useState<Record<string, string>>({});
  const [result, setResult] = useState<{ type: string; detail: Detail } | undefined>();
  const act = useAction();

  const available = Object.keys(types.data ?? {});
  // the type policy default_tokentype names first (privacyIDEA's default: hotp)
  const preferred = session.settings.defaultTokenType;
  const t = type || (available.includes(preferred) ? preferred : available[0] ?? "");
  const isOath = t === "hotp" || t === "totp";
  // users set a PIN at enrolment only with the enrollpin right; admins always may
  const canPin = !props.self || hasRight(session, "enrollpin");
  const twoStepRight = rightValue(session, `${t}_2step`);
  const setX = (k: string) => (v: string) => setExtra({ ...extra, [k]: v });

  function submit() {
    act.run(async () => {
      const params: Record<string, unknown> = { type: t, description };
      if (!props.self) {
        if (user.trim()) params.user = user.trim();
        if (realm.trim()) params.realm = realm.trim();
      }
      if (canPin && pin) params.pin = pin;
      if (isOath) {
        if (genkey || props.self) params.genkey = 1;
        else params.otpkey = otpkey;
        params.otplen = Number(otplen);
        params.hashlib = hashlib;
        if (t === "totp") params.timeStep = Number(timeStep);
        if (twoStep) params["2stepinit"] = 1;
      }
      // the server makes the push token's keys; the app adds its own at /ttype/push
      if (t === "push") params.genkey = 1;
      if (t === "pw") params.otpkey = extra.password ?? "";
      if (t === "sshkey") params.sshkey = extra.sshkey ?? "";
      if (t === "radius") {
        params["radius.identifier"] = extra.identifier ?? "";
        params["radius.user"] = extra.radiususer ?? "";
      }
      const r = await api("POST", "/token/init", params);
      setResult({ type: t, detail: r.detail ?? {} });
      setPin("");
      props.onEnrolled?.();
    });
  }

  if (result) {
    return (
      <>
        <EnrollResult type={result.type} detail={result.detail} onDone={props.onEnrolled} />
        <button type="button" onClick={() => setResult(undefined)}>Enrol another token</button>
      </>
    );
  }
  return (
    <>
      <LoadState error={types.error} loading={types.loading} />
      {types.data && available.length === 0 && (
        <p class="muted">You are not allowed to enrol any token type.</p>
      )}
      {available.length > 0 && (
        <Form label="Enrol a token" onSubmit={submit}>
          <Select
            label="Token type"
            value={t}
            onValue={setType}
            options={available.map((k) => [k, types.data![k]])}
          />
          {!props.self && (
            <>
              <Field label="User" value={user} onValue={setUser} hint="empty: no owner" />
              <Field label="Realm" value={realm} onValue={setRealm} />
            </>
          )}
          <Field label="Description" value={description} onValue={setDescription} />
          {canPin && t !== "sshkey" && (
            <Field
              label="PIN"
              type="password"
              value={pin}
              onValue={setPin}
              autoComplete="new-password"
            />
          )}
          {isOath && !props.self && (
            <>
              <Check
                label="Generate the key on the server"
                checked={genkey}
                onChecked={setGenkey}
              />
              {!genkey && (
                <Field label="OTP key (hex)" value={otpkey} onValue={setOtpkey} required />
              )}
              <Select label="OTP length" value={otplen} onValue={setOtplen} options={["6", "8"]} />
              <Select
                label="Hash algorithm"
                value={hashlib}
                onValue={setHashlib}
                options={["sha1", "sha256", "sha512"]}
              />
              {t === "totp" && (
                <Select
                  label="Time step (seconds)"
                  value={timeStep}
                  onValue={setTimeStep}
                  options={["30", "60"]}
                />
              )}
            </>
          )}
          {isOath && twoStepRight !== undefined && twoStepRight !== "force" && (
            <Check
              label="Two-step enrolment (the app adds its own part of the key)"
              checked={twoStep}
              onChecked={setTwoStep}
            />
          )}
          {t === "pw" && (
            <Field
              label="Password"
              type="password"
              value={extra.password ?? ""}
              onValue={setX("password")}
              required
            />
          )}
          {t === "sshkey" && (
            <Field
              label="SSH public key"
              value={extra.sshkey ?? ""}
              onValue={setX("sshkey")}
              required
            />
          )}
          {t === "radius" && (
            <>
              <Field
                label="RADIUS server identifier"
                value={extra.identifier ?? ""}
                onValue={setX("identifier")}
                required
              />
              <Field
                label="RADIUS user"
                value={extra.radiususer ?? ""}
                onValue={setX("radiususer")}
                required
              />
            </>
          )}
          <button type="submit" class="primary" disabled={act.busy}>Enrol</button>
          <Outcome error={act.error} />
        </Form>
      )}
      {isOath && session.settings.appQrCodes.length > 0 && (
        <section class="apps" aria-label="Authenticator apps">
          {session.settings.appQrCodes.map((app) => (
            <figure key={app.src} class="qr">
              <img src={app.src} width={150} height={150} alt={`QR code: ${app.label}`} />
              <figcaption>Scan to get {app.label}.</figcaption>
            </figure>
          ))}
        </section>
      )}
    </>
  );
}

/** `#/enroll?user=…&realm=…`: an admin enrols a token. */
export function EnrollPage(props: { route: Route }) {
  const user = props.route.query.get("user") ?? "";
  const realm = props.route.query.get("realm") ?? "";
  return (
    <Page
      title="Enrol a token"
      actions={user
        ? <a href={href(["users", realm, user])}>Back to {user}</a>
        : <a href={href(["tokens"])}>Back to tokens</a>}
    >
      <EnrollForm key={`${user}@${realm}`} user={user} realm={realm} />
    </Page>
  );
}
