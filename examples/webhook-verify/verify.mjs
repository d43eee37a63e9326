import { createHmac, timingSafeEqual } from "node:crypto";

/**
 * Whether an Ovation webhook delivery is genuine and fresh: `signature` is its
 * X-Ovation-Signature header (`t=<unix>,v1=<hex>[,v1=<hex>]`), `delivery` its
 * X-Ovation-Delivery header, `body` the raw request body as text.
 */
export function verifyOvation(secret, signature, delivery, body, now = Date.now() / 1000, toleranceS = 300) {
  const parts = signature.split(",").map((p) => p.split("="));
  const t = Number(parts.find(([k]) => k === "t")?.[1]);
  if (!Number.isInteger(t) || Math.abs(now - t) > toleranceS) return false;
  const expected = createHmac("sha256", secret).update(`${t}.${delivery}.${body}`).digest();
  return parts
    .filter(([k]) => k === "v1")
    .some(([, hex]) => {
      const given = Buffer.from(hex ?? "", "hex");
      return given.length === expected.length && timingSafeEqual(given, expected);
    });
}

// Run as a program (as the tests do): the delivery's body on standard input, the rest in
// the environment; exits 0 when it verifies, 1 when not.
if (import.meta.url === `file://${process.argv[1]}`) {
  const chunks = [];
  for await (const chunk of process.stdin) chunks.push(chunk);
  const { OVATION_SECRET, SIGNATURE, DELIVERY, NOW } = process.env;
  const now = NOW ? Number(NOW) : undefined;
  process.exit(verifyOvation(OVATION_SECRET, SIGNATURE, DELIVERY, Buffer.concat(chunks).toString("utf8"), now) ? 0 : 1);
}
