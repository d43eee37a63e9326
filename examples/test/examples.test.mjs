// The examples against a live server (scripts/test-clients.sh sets OVATION_URL and
// OVATION_KEY, a master key): the client's ten lines run from the packed package, the
// token backend's tokens vote, its trusted votes count for the user, and the live-top
// script prints the top as it changes.
import { test } from "node:test";
import assert from "node:assert/strict";
import { execFileSync, spawn } from "node:child_process";
import { randomUUID } from "node:crypto";
import { copyFileSync, mkdirSync, mkdtempSync, readFileSync, rmSync, writeFileSync } from "node:fs";
import { tmpdir } from "node:os";
import { join } from "node:path";
import { fileURLToPath } from "node:url";

import { Ovation } from "../../clients/typescript/dist/index.js";
import { admin, baseUrl, key, newBoard } from "./server.mjs";

const here = (path) => fileURLToPath(new URL(path, import.meta.url));

/** Starts `node file` with `env`; resolves once it printed `ready` (a line matching it). */
function start(file, env, ready) {
  const child = spawn(process.execPath, [file.startsWith("/") ? file : here(file), ...(env.ARGS ?? [])], {
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

test("the client's ten lines run from the packed package, as its README shows them", async () => {
  const quickstart = here("../quickstart/quickstart.mjs");
  const readme = readFileSync(here("../../clients/typescript/README.md"), "utf8");
  assert.ok(readme.includes("```js\n" + readFileSync(quickstart, "utf8") + "```\n"), "the README shows quickstart.mjs");
  const dir = mkdtempSync(join(tmpdir(), "ovation-quickstart-"));
  try {
    const packed = execFileSync("npm", ["pack", "--silent", "--pack-destination", dir], {
      cwd: here("../../clients/typescript"),
      encoding: "utf8",
    }).trim().split("\n").at(-1);
    const app = join(dir, "app");
    mkdirSync(app);
    writeFileSync(join(app, "package.json"), JSON.stringify({ name: "app", private: true, type: "module" }));
    execFileSync("npm", ["install", "--silent", "--no-audit", "--no-fund", join(dir, packed)], { cwd: app });
    copyFileSync(quickstart, join(app, "quickstart.mjs"));
    await admin("POST", "/api/v1/admin/boards", {
      slug: "talent", title: "Talent", membership: "open", periods: ["day"],
    });
    const run = start(join(app, "quickstart.mjs"), { OVATION_URL: baseUrl, OVATION_KEY: key }, /^1\. m3 1$/m);
    await run.shown;
    const printed = (pattern) =>
      new Promise((resolve, reject) => {
        const timer = setTimeout(() => reject(new Error(`not printed: ${pattern}\n${run.output()}`)), 10_000);
        const check = () => pattern.test(run.output()) && (clearTimeout(timer), resolve());
        run.child.stdout.on("data", check);
        check();
      });
    const vote = (member, count, voter) =>
      admin("POST", "/api/v1/boards/talent/votes", { member, count, voter });
    await vote("m3", 1, "user-7");
    await vote("m1", 1, "user-8");
    await printed(/^1\. m3 2\n2\. m1 1$/m);
    await vote("m1", 2, "user-9");
    await printed(/^1\. m1 3\n2\. m3 2\nm1 passes m3!$/m);
    run.child.kill("SIGINT");
    const code = await new Promise((resolve) => run.child.on("exit", resolve));
    assert.equal(code, 0, "close() ends it");
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

test("the token backend's tokens vote straight to Ovation, and its trusted votes count", async () => {
  const name = `shop-${randomUUID().slice(0, 8)}`;
  const provider = await admin("POST", "/api/v1/admin/identity-providers", {
    name,
    kind: "hmac",
    issuer: `https://${name}.example`,
    audience: "ovation",
  });
  const board = await newBoard({ periods: ["all"], identity_providers: [name] });
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
  const board = await newBoard({ periods: ["all"], public_page: true });
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
