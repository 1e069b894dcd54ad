/**
 * Single-shot check (`push_wait`, spec 13 §1.6.3): a request with the right
 * PIN makes the token's challenge and waits for the app's answer instead of
 * answering with the challenge.
 *
 * @module
 */
import type { TokenWithInfo } from "../token/mod.ts";
import { challengesOfTransaction, consumeTransaction, DECLINED_SESSION } from "../challenge/mod.ts";
import type { CheckContext } from "./_context.ts";
import { triggerChallenges } from "./_challenges.ts";

// privacyIDEA polls once a second; a shorter interval answers sooner at the cost of one
// indexed read per interval
const POLL_MS = 200;

/**
 * Makes `t`'s challenge and polls its state in the database (so an answer
 * another node took counts) for up to `seconds`; true if it was answered in
 * time, then the transaction is closed. No transaction or write lock is held
 * while waiting.
 */
export async function waitForAnswer(
  ctx: CheckContext,
  t: TokenWithInfo,
  seconds: number,
): Promise<boolean> {
  // this request's earlier writes are committed before it waits
  await ctx.pending.settle();
  const made = await triggerChallenges(ctx, [t], { isWaiting: true });
  const transactionId = made.detail.transaction_id;
  if (made.count === 0 || typeof transactionId !== "string") return false;
  const deadline = performance.now() + seconds * 1000;
  for (;;) {
    const left = deadline - performance.now();
    if (left <= 0) return false;
    await new Promise((resolve) => setTimeout(resolve, Math.min(POLL_MS, left)));
    const [c] = await challengesOfTransaction(ctx.deps, transactionId, [t.serial]);
    // gone (deleted), declined or expired: no answer will come
    if (!c || c.session === DECLINED_SESSION || c.expiresAt < ctx.deps.clock.now()) return false;
    if (c.isAnswered) {
      await consumeTransaction(ctx.deps, transactionId);
      return true;
    }
  }
}
