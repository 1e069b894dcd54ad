/**
 * Worker entry of {@link argon2OffThread}: computes one Argon2 job and posts
 * the raw output (or the error text) back.
 *
 * @module
 */
/// <reference no-default-lib="true" />
/// <reference lib="deno.worker" />
import { type Argon2Job, argon2Raw } from "./argon2.ts";

self.onmessage = async (e: MessageEvent<Argon2Job>) => {
  try {
    self.postMessage({ out: await argon2Raw(e.data) });
  } catch (err) {
    self.postMessage({ error: String(err) });
  }
};
