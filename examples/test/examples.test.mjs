// The examples against a live server (scripts/test-clients.sh sets OVATION_URL and
// OVATION_KEY, a master key): the token backend's tokens vote, its trusted votes count
// for the user, and the live-top script prints the top as it changes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { fileURLToPath } from "node:url";

import { Ovation } from "../../clients/typescript/dist/index.js";

const baseUrl = process.env.OVATION_URL;
const key = process.env.OVATION_KEY;
const here = (path) => fileURLToPath(new URL(path, import.meta.url));

async function admin(method, path, body) {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${key}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return JSON.parse(text);
}

/** Starts `node file` with `env`; resolves once it printed `ready` (a line matching it). */
function start(file, env, ready) {
  const child = spawn(process.execPath, [here(file), ...(env.ARGS ?? [])], {
    env: { ...process.env, ...env },
    stdio: ["ignore", "pipe", "inherit"],
  });
  let out = "";
  const shown = new Promise((resolve) =>
    child.stdout.on("data", (chunk) => {
      out += chunk;
      const found = out.match(ready);
      if (found) resolve(found);
    }),
  );
  return { child, shown, output: () => out };
}

test("the token backend's tokens vote straight to Ovation, and its trusted votes count", async () => {
  const name = `shop-${randomUUID().slice(0, 8)}`;
  const provider = await admin("POST", "/api/v1/admin/identity-providers", {
    name,
    kind: "hmac",
    issuer: `https://${name}.example`,
    audience: "ovation",
  });
  const board = `b-${randomUUID().slice(0, 8)}`;
  await admin("POST", "/api/v1/admin/boards", {
    slug: board,
    title: board,
    membership: "open",
    periods: ["all"],
    identity_providers: [name],
  });
  const trusted = await admin("POST", "/api/v1/admin/api-keys", {
    name: "backend",
    scopes: ["vote", "trusted"],
  });
  const backend = start(
    "../token-backend/server.mjs",
    {
      OVATION_URL: baseUrl,
      PROVIDER_SECRET: provider.secret,
      ISSUER: `https://${name}.example`,
      AUDIENCE: "ovation",
      TRUSTED_KEY: trusted.key,
      PORT: "0",
    },
    /listening on (\d+)/,
  );
  try {
    const port = (await backend.shown)[1];
    const at = (path, user, body) =>
      fetch(`http://127.0.0.1:${port}${path}`, {
        method: "POST",
        headers: { "x-user": user, "content-type": "application/json" },
        body: JSON.stringify(body ?? {}),
      });
    assert.equal((await at("/token", "")).status, 401);
    const { token } = await (await at("/token", "ada")).json();
    const voter = new Ovation({ baseUrl, voterToken: token });
    await voter.vote(board, { member: "m1" });
    const relayed = await at(`/vote/${board}`, "bob", { member: "m1" });
    assert.equal(relayed.status, 200, await relayed.clone().text());
    const client = new Ovation({ baseUrl, apiKey: key });
    const member = await client.member(board, "m1", { period: "all", view: "real" });
    assert.equal(member.score, 2);
    assert.equal(member.participants, 2);
  } finally {
    backend.child.kill();
  }
});

test("the live-top script prints the top as it changes", async () => {
  const board = `b-${randomUUID().slice(0, 8)}`;
  await admin("POST", "/api/v1/admin/boards", {
    slug: board,
    title: board,
    membership: "open",
    periods: ["all"],
    public_page: true,
  });
  const client = new Ovation({ baseUrl, apiKey: key });
  await client.vote(board, { member: "a", count: 2, voter: "v1" });
  const follower = start(
    "../live-top/follow.mjs",
    { OVATION_URL: baseUrl, OVATION_KEY: "", UPDATES: "2", ARGS: [board, "all"] },
    /1\. a 2/,
  );
  await follower.shown;
  await client.vote(board, { member: "b", count: 3, voter: "v2" });
  const code = await new Promise((resolve) => follower.child.on("exit", resolve));
  assert.equal(code, 0);
  const out = follower.output();
  assert.match(out, /1\. b 3\n2\. a 2/);
});
