/**
 * A tiny client of the privacyIDEA-compatible API, used to enrol users and
 * tokens and to read back counters.
 *
 * @module
 */

/** The parsed envelope of one answer. */
export interface ApiAnswer {
  httpStatus: number;
  /** The body as sent. */
  text: string;
  // deno-lint-ignore no-explicit-any
  body: any;
}

/** Thrown when the server answers with an error envelope or a non-2xx status. */
export class ApiError extends Error {
  constructor(readonly answer: ApiAnswer, what: string) {
    const err = answer.body?.result?.error;
    super(
      `${what}: HTTP ${answer.httpStatus}${
        err ? ` ERR${err.code}: ${err.message}` : ` ${JSON.stringify(answer.body).slice(0, 300)}`
      }`,
    );
  }
}

/** Client bound to one base URL and (after login) one admin JWT. */
export class Api {
  jwt?: string;
  /** `fetchFn` defaults to the global fetch (in-process runs pass `app.request`). */
  constructor(
    readonly base: string,
    readonly fetchFn: (url: string, init: RequestInit) => Promise<Response> = fetch,
  ) {}

  /** Sends a request; params go as form fields (POST) or query (GET/DELETE). */
  async raw(
    method: string,
    path: string,
    params: Record<string, string | number> = {},
  ): Promise<ApiAnswer> {
    const form = new URLSearchParams();
    for (const [k, v] of Object.entries(params)) form.set(k, String(v));
    const headers: Record<string, string> = {};
    if (this.jwt) headers["PI-Authorization"] = this.jwt;
    let url = this.base + path;
    let body: string | undefined;
    if (method === "GET" || method === "DELETE") {
      const q = form.toString();
      if (q) url += (url.includes("?") ? "&" : "?") + q;
    } else {
      headers["Content-Type"] = "application/x-www-form-urlencoded";
      body = form.toString();
    }
    const res = await this.fetchFn(url, { method, headers, body });
    const text = await res.text();
    let parsed: unknown;
    try {
      parsed = JSON.parse(text);
    } catch {
      parsed = { text };
    }
    return { httpStatus: res.status, text, body: parsed };
  }

  /** Like {@link raw} but returns `result.value` and throws on any error. */
  // deno-lint-ignore no-explicit-any
  async call(method: string, path: string, params?: Record<string, string | number>): Promise<any> {
    const answer = await this.raw(method, path, params);
    if (answer.httpStatus >= 300 || answer.body?.result?.status !== true) {
      throw new ApiError(answer, `${method} ${path}`);
    }
    return answer.body.result.value;
  }

  /** POST /auth; keeps the JWT for later calls. */
  async login(username: string, password: string): Promise<void> {
    const value = await this.call("POST", "/auth", { username, password });
    this.jwt = value.token;
  }
}

/** Runs `fn` over `items` with at most `limit` calls at once; results in input order. */
export async function mapLimit<T, R>(
  items: readonly T[],
  limit: number,
  fn: (item: T, index: number) => Promise<R>,
): Promise<R[]> {
  const out: R[] = new Array(items.length);
  let next = 0;
  const worker = async () => {
    while (next < items.length) {
      const i = next++;
      out[i] = await fn(items[i], i);
    }
  };
  await Promise.all(Array.from({ length: Math.min(limit, items.length) }, worker));
  return out;
}
