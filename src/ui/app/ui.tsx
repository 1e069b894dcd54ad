/** @jsxImportSource preact */
/** @jsxRuntime automatic */
/**
 * Shared building blocks: labelled fields, buttons with confirmation,
 * messages, tables, paging, the hash router and data-loading hooks.
 *
 * @module
 */
import type { ComponentChildren } from "preact";
import { useCallback, useEffect, useId, useRef, useState } from "preact/hooks";
import { messageOf } from "./api.ts";

// ---------------------------------------------------------------- routing

/** The current hash route: path segments and query. */
export interface Route {
  parts: string[];
  query: URLSearchParams;
}

function currentRoute(): Route {
  const hash = location.hash.replace(/^#\/?/, "");
  const [path, query = ""] = hash.split("?");
  return {
    parts: path.split("/").filter((p) => p !== "").map((p) => decodeURIComponent(p)),
    query: new URLSearchParams(query),
  };
}

/** Follows `location.hash`. */
export function useRoute(): Route {
  const [route, setRoute] = useState(currentRoute);
  useEffect(() => {
    const on = () => setRoute(currentRoute());
    addEventListener("hashchange", on);
    return () => removeEventListener("hashchange", on);
  }, []);
  return route;
}

/** A hash link target from path segments and an optional query. */
export function href(parts: (string | number)[], query: Record<string, string> = {}): string {
  const q = new URLSearchParams(Object.entries(query).filter(([, v]) => v !== "")).toString();
  return `#/${parts.map((p) => encodeURIComponent(String(p))).join("/")}${q ? `?${q}` : ""}`;
}

/** Navigates to a hash route. */
export function go(parts: (string | number)[], query: Record<string, string> = {}): void {
  location.hash = href(parts, query);
}

// ---------------------------------------------------------------- announcements

/** What {@link announce} said last, and the route it belongs to. */
interface Announcement {
  message: string;
  hash: string;
}

let announcementListener: ((a: Announcement | undefined) => void) | undefined;

/**
 * Says what happened in the page's status line (visible, and read out by
 * screen readers), e.g. after an action that left the page it was taken on.
 * Call it after {@link go}: it stays until the route changes again.
 */
export function announce(message: string): void {
  announcementListener?.({ message, hash: location.hash });
}

/** The status line {@link announce} writes to; always in the page, so that a change is read out. */
export function StatusLine() {
  const [current, setCurrent] = useState<Announcement | undefined>(undefined);
  useEffect(() => {
    announcementListener = setCurrent;
    const onRoute = () => setCurrent((a) => (a && a.hash === location.hash ? a : undefined));
    addEventListener("hashchange", onRoute);
    return () => {
      announcementListener = undefined;
      removeEventListener("hashchange", onRoute);
    };
  }, []);
  return (
    <p class={current ? "note announcement" : "announcement"} role="status">
      {current?.message ?? ""}
    </p>
  );
}

// ---------------------------------------------------------------- data

/** Loads data with `load`, again whenever `deps` change or `reload()` is called. */
export function useLoad<T>(load: () => Promise<T>, deps: unknown[]) {
  const [state, setState] = useState<{ data?: T; error?: string; loading: boolean }>({
    loading: true,
  });
  const [tick, setTick] = useState(0);
  useEffect(() => {
    let live = true;
    setState((s) => ({ ...s, loading: true }));
    load().then(
      (data) => live && setState({ data, loading: false }),
      (err) => live && setState({ error: messageOf(err), loading: false }),
    );
    return () => {
      live = false;
    };
  }, [...deps, tick]);
  const reload = useCallback(() => setTick((t) => t + 1), []);
  return { ...state, reload };
}

/**
 * Live search: `apply` runs a moment after the search fields (`deps`) last changed, unless
 * policy search_on_enter asks for searching on Enter (the form's submit) only.
 */
export function useLiveSearch(isLive: boolean, apply: () => void, deps: unknown[]): void {
  const latest = useRef(apply);
  latest.current = apply;
  const started = useRef(false);
  useEffect(() => {
    // the fields' first values are what the page loaded with: nothing to search yet
    if (!started.current) {
      started.current = true;
      return;
    }
    if (!isLive) return;
    const timer = setTimeout(() => latest.current(), 300);
    return () => clearTimeout(timer);
  }, deps);
}

/** Runs user actions: one at a time, with the API's message or a success note. */
export function useAction() {
  const [state, setState] = useState<{ busy: boolean; error?: string; note?: string }>({
    busy: false,
  });
  const run = useCallback(async (fn: () => Promise<unknown>, note?: string) => {
    setState({ busy: true });
    try {
      const said = await fn();
      // an action may say what happened itself (e.g. a test's description)
      setState({ busy: false, note: typeof said === "string" && said ? said : note });
      return true;
    } catch (err) {
      setState({ busy: false, error: messageOf(err) });
      return false;
    }
  }, []);
  const clear = useCallback(() => setState({ busy: false }), []);
  return { ...state, run, clear };
}

/** The error or success note of an action, where it was taken. */
export function Outcome(props: { error?: string; note?: string }) {
  return (
    <>
      {props.error && <p class="error" role="alert">{props.error}</p>}
      {props.note && <p class="note" role="status">{props.note}</p>}
    </>
  );
}

/** A load error or a loading note. */
export function LoadState(props: { error?: string; loading?: boolean }) {
  if (props.error) return <p class="error" role="alert">{props.error}</p>;
  if (props.loading) return <p class="muted" aria-live="polite">Loading…</p>;
  return null;
}

// ---------------------------------------------------------------- fields

/** What a {@link Field} passes on to its input. */
interface InputOptions {
  type?: "text" | "password" | "search" | "number" | "email" | "url";
  required?: boolean;
  disabled?: boolean;
  autoComplete?: string;
  autoFocus?: boolean;
  inputMode?: "numeric" | "text";
  min?: number;
  max?: number;
  step?: number | "any";
  title?: string;
  placeholder?: string;
}

/** The help text under a control, named by the control's `aria-describedby`. */
function Hint(props: { id: string; text?: string }) {
  return props.text ? <small id={props.id} class="help">{props.text}</small> : null;
}

/** A labelled text input; a hint describes it without becoming part of its name. */
export function Field(
  props: InputOptions & {
    label: string;
    value: string;
    onValue: (v: string) => void;
    hint?: string;
    wide?: boolean;
  },
) {
  const { label, value, onValue, hint, type, wide, ...rest } = props;
  const id = useId();
  return (
    <div class={wide ? "field wide" : "field"}>
      <label for={id}>{label}</label>
      <input
        id={id}
        // one variant of preact's input type union: the attributes are the same for ours
        type={(type ?? "text") as "text"}
        {...rest}
        aria-describedby={hint ? `${id}-hint` : undefined}
        value={value}
        onInput={(e) => onValue((e.target as HTMLInputElement).value)}
      />
      <Hint id={`${id}-hint`} text={hint} />
    </div>
  );
}

/** A labelled multi-line input. */
export function TextArea(
  props: {
    label: string;
    value: string;
    onValue: (v: string) => void;
    rows?: number;
    hint?: string;
    disabled?: boolean;
    required?: boolean;
    placeholder?: string;
  },
) {
  const id = useId();
  return (
    <div class="field wide">
      <label for={id}>{props.label}</label>
      <textarea
        id={id}
        rows={props.rows ?? 3}
        value={props.value}
        disabled={props.disabled}
        required={props.required}
        placeholder={props.placeholder}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onInput={(e) => props.onValue((e.target as HTMLTextAreaElement).value)}
      />
      <Hint id={`${id}-hint`} text={props.hint} />
    </div>
  );
}

/** A labelled select; options are values or [value, text] pairs. */
export function Select(
  props: {
    label: string;
    value: string;
    onValue: (v: string) => void;
    options: (string | [string, string])[];
    required?: boolean;
    disabled?: boolean;
    hint?: string;
  },
) {
  const id = useId();
  return (
    <div class="field">
      <label for={id}>{props.label}</label>
      <select
        id={id}
        value={props.value}
        required={props.required}
        disabled={props.disabled}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onChange={(e) => props.onValue((e.target as HTMLSelectElement).value)}
      >
        {props.options.map((o) => {
          const [v, t] = Array.isArray(o) ? o : [o, o];
          return <option key={v} value={v}>{t}</option>;
        })}
      </select>
      <Hint id={`${id}-hint`} text={props.hint} />
    </div>
  );
}

/** A labelled checkbox; a hint below it describes it. */
export function Check(
  props: {
    label: string;
    checked: boolean;
    onChecked: (v: boolean) => void;
    title?: string;
    hint?: string;
    disabled?: boolean;
  },
) {
  const id = useId();
  const box = (
    <label class="check" title={props.title}>
      <input
        type="checkbox"
        checked={props.checked}
        disabled={props.disabled}
        aria-describedby={props.hint ? `${id}-hint` : undefined}
        onChange={(e) => props.onChecked((e.target as HTMLInputElement).checked)}
      />
      <span>{props.label}</span>
    </label>
  );
  if (!props.hint) return box;
  return (
    <div class="field check-field">
      {box}
      <Hint id={`${id}-hint`} text={props.hint} />
    </div>
  );
}

/** A form that runs `onSubmit` without reloading the page. */
export function Form(
  props: {
    onSubmit: () => void;
    children: ComponentChildren;
    label?: string;
    class?: string;
  },
) {
  return (
    <form
      class={props.class ?? "form"}
      aria-label={props.label}
      onSubmit={(e) => {
        e.preventDefault();
        props.onSubmit();
      }}
    >
      {props.children}
    </form>
  );
}

// ---------------------------------------------------------------- buttons

/**
 * Moves focus to the page's heading: after a page change, or when the focused
 * control went away, so the next Tab starts in the page, not at its top.
 */
export function focusHeading(): void {
  document.querySelector<HTMLElement>("main h1")?.focus();
}

/**
 * When the focused control is removed (Revoke removes its button, a deleted
 * token its article), the browser drops focus to the body and the next Tab
 * starts at the top of the page: this moves it to the page's heading instead.
 */
export function useFocusRescue(): void {
  useEffect(() => {
    const onFocusOut = (e: FocusEvent) => {
      const lost = e.target;
      // the event comes while the control is still in the page; look once it is gone
      if (e.relatedTarget !== null || !(lost instanceof Node)) return;
      setTimeout(() => {
        const active = document.activeElement;
        if (!lost.isConnected && (active === null || active === document.body)) focusHeading();
      });
    };
    document.addEventListener("focusout", onFocusOut);
    return () => document.removeEventListener("focusout", onFocusOut);
  }, []);
}

const FOCUSABLE = "a[href], button:not([disabled]), input:not([disabled]), " +
  'select:not([disabled]), textarea:not([disabled]), [tabindex]:not([tabindex="-1"])';

/**
 * Keeps Tab and Shift+Tab inside a modal dialog (`onKeyDown` of the dialog): from its last
 * control Tab goes to its first, and back. A modal dialog makes the page behind it inert, but the
 * browser still lets Tab leave the dialog for its own address bar.
 */
export function trapTab(e: KeyboardEvent): void {
  if (e.key !== "Tab") return;
  const dialog = e.currentTarget as HTMLElement;
  const items = [...dialog.querySelectorAll<HTMLElement>(FOCUSABLE)].filter((el) =>
    el.getClientRects().length > 0
  );
  if (items.length === 0) return;
  const first = items[0];
  const last = items[items.length - 1];
  const active = document.activeElement;
  if (e.shiftKey && (active === first || !dialog.contains(active))) {
    e.preventDefault();
    last.focus();
  } else if (!e.shiftKey && (active === last || !dialog.contains(active))) {
    e.preventDefault();
    first.focus();
  }
}

/**
 * A button that asks first, in a modal dialog, and then runs `onConfirm`.
 * Closing the dialog gives focus back to the button (when the action then
 * removes the button, {@link useFocusRescue} moves focus to the heading).
 */
export function ConfirmButton(
  props: {
    label: string;
    question: string;
    confirmLabel?: string;
    onConfirm: () => void;
    disabled?: boolean;
    danger?: boolean;
    title?: string;
  },
) {
  const [open, setOpen] = useState(false);
  const ref = useRef<HTMLDialogElement>(null);
  const trigger = useRef<HTMLButtonElement>(null);
  const wasOpen = useRef(false);
  useEffect(() => {
    const d = ref.current;
    if (open && d && !d.open) d.showModal();
    // the dialog is removed, not closed, so the browser does not restore focus itself
    if (!open && wasOpen.current) trigger.current?.focus();
    wasOpen.current = open;
  }, [open]);
  return (
    <>
      <button
        ref={trigger}
        type="button"
        class={props.danger ? "danger" : undefined}
        disabled={props.disabled}
        title={props.title}
        onClick={() => setOpen(true)}
      >
        {props.label}
      </button>
      {open && (
        <dialog
          ref={ref}
          aria-label={props.label}
          onClose={() => setOpen(false)}
          onKeyDown={trapTab}
        >
          <p>{props.question}</p>
          <div class="actions">
            <button type="button" onClick={() => setOpen(false)}>Cancel</button>
            <button
              type="button"
              class={props.danger ? "danger" : "primary"}
              onClick={() => {
                setOpen(false);
                props.onConfirm();
              }}
            >
              {props.confirmLabel ?? props.label}
            </button>
          </div>
        </dialog>
      )}
    </>
  );
}

// ---------------------------------------------------------------- layout

/** A page with its heading. */
export function Page(
  props: { title: string; children: ComponentChildren; actions?: ComponentChildren },
) {
  useEffect(() => {
    document.title = `${props.title} · Tessera`;
  }, [props.title]);
  return (
    <section class="page">
      <header class="page-head">
        <h1 tabIndex={-1}>{props.title}</h1>
        {props.actions && <div class="actions">{props.actions}</div>}
      </header>
      {props.children}
    </section>
  );
}

/** A titled part of a page. */
export function Panel(props: { title: string; children: ComponentChildren }) {
  return (
    <section class="panel" aria-label={props.title}>
      <h2>{props.title}</h2>
      {props.children}
    </section>
  );
}

/** Paging buttons for a list of `count` items. */
export function Pager(
  props: { page: number; pageSize: number; count: number; onPage: (p: number) => void },
) {
  const pages = Math.max(1, Math.ceil(props.count / props.pageSize));
  return (
    <nav class="pager" aria-label="Pages">
      <button
        type="button"
        disabled={props.page <= 1}
        onClick={() => props.onPage(props.page - 1)}
      >
        Previous page
      </button>
      <span>Page {props.page} of {pages} ({props.count} in all)</span>
      <button
        type="button"
        disabled={props.page >= pages}
        onClick={() => props.onPage(props.page + 1)}
      >
        Next page
      </button>
    </nav>
  );
}

/** A yes/no cell. */
export function yesNo(v: unknown): string {
  return v === true || v === 1 || v === "1" || v === "True" ? "yes" : "no";
}

/** Splits `a, b` into trimmed non-empty parts. */
export function csv(text: string): string[] {
  return text.split(",").map((s) => s.trim()).filter((s) => s !== "");
}
