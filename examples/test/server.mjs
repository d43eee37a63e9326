// The live server the examples' tests run against (scripts/test-clients.sh starts it and
// sets OVATION_URL and OVATION_KEY, a master key), and the admin calls they make of it.
import assert from "node:assert/strict";
import { randomUUID } from "node:crypto";

export const baseUrl = process.env.OVATION_URL;
export const key = process.env.OVATION_KEY;
assert.ok(baseUrl && key, "OVATION_URL and OVATION_KEY are set");

/** An API call with the master key; its JSON answer (null when empty), failing on a refusal. */
export async function admin(method, path, body) {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

/** A new open board named at random, with `fields` (periods, voters, …); its slug. */
export async function newBoard(fields) {
  const slug = `b-${randomUUID().slice(0, 8)}`;
  await admin("POST", "/api/v1/admin/boards", { slug, title: slug, membership: "open", ...fields });
  return slug;
}
