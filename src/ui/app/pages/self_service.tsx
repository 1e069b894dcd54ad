/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * A user's self-service: their tokens with the actions their user policies
 * allow, and enrolling a new one.
 *
 * @module
 */
import { useEffect, useState } from "preact/hooks";
import { get } from "../api.ts";
import { useSession } from "../session.ts";
import { go, LoadState, Page, Panel, useLoad, useRoute, yesNo } from "../ui.tsx";
import { EnrollForm } from "./enroll.tsx";
import { stateText, TokenActions, type TokenList } from "./tokens.tsx";

/** `#/` for a user. */
export function SelfServicePage() {
  const { session } = useSession();
  const tokens = useLoad(() => get<TokenList>("/token/"), []);
  const route = useRoute();
  const canEnroll = [...session.rights].some((r) => r.startsWith("enroll"));
  // `#/enrol` opens the enrolment (the no-token dialog leads there)
  const [enrolling, setEnrolling] = useState(false);
  useEffect(() => {
    if (route.parts[0] !== "enrol") return;
    if (canEnroll) setEnrolling(true);
    go([]);
  }, [route.parts[0]]);
  const list = tokens.data?.tokens ?? [];
  return (
    <Page
      title="My tokens"
      actions={canEnroll && !enrolling && (
        <button
          type="button"
          class="primary"
          onClick={() => setEnrolling(true)}
        >
          Enrol a new token
        </button>
      )}
    >
      {enrolling && (
        <Panel title="Enrol a new token">
          <EnrollForm self onEnrolled={tokens.reload} />
          <button type="button" onClick={() => setEnrolling(false)}>Close enrolment</button>
        </Panel>
      )}
      <LoadState error={tokens.error} loading={tokens.loading && !tokens.data} />
      {tokens.data && list.length === 0 && <p class="muted">You have no token yet.</p>}
      {list.map((t) => (
        <article class="panel token" key={t.serial} aria-label={`Token ${t.serial}`}>
          <h2>{t.serial}</h2>
          <p>
            {t.tokentype.toUpperCase()} · {stateText(t)}
            {t.description ? ` · ${t.description}` : ""} · fail counter {t.failcount} of {t.maxfail}
            {t.rollout_state && t.rollout_state !== "enrolled" ? ` · ${t.rollout_state}` : ""}
            <span class="sr-only">Active: {yesNo(t.active)}</span>
          </p>
          <TokenActions token={t} onChanged={tokens.reload} onDeleted={tokens.reload} />
        </article>
      ))}
    </Page>
  );
}
