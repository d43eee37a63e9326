// The client against a live server (scripts/test-clients.sh starts one and sets
// OVATION_URL and OVATION_KEY, a master key).
import { test } from "node:test";
import assert from "node:assert/strict";
import { createHmac, randomUUID } from "node:crypto";

import { Ovation, OvationError } from "../dist/index.js";

const baseUrl = process.env.OVATION_URL;
const apiKey = process.env.OVATION_KEY;
assert.ok(baseUrl && apiKey, "OVATION_URL and OVATION_KEY are set");

const client = new Ovation({ baseUrl, apiKey, backoffMs: 10 });

async function admin(method, path, body) {
  const response = await fetch(baseUrl + path, {
    method,
    headers: { authorization: `Bearer ${apiKey}`, "content-type": "application/json" },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await response.text();
  assert.ok(response.ok, `${method} ${path}: ${response.status} ${text}`);
  return text ? JSON.parse(text) : null;
}

async function board(extra = {}) {
  const slug = `b-${randomUUID().slice(0, 8)}`;
  await admin("POST", "/api/v1/admin/boards", {
    slug,
    title: slug,
    membership: "open",
    periods: ["day", "all"],
    ...extra,
  });
  return slug;
}

test("a vote counts once, and its retry with the same key is a replay", async () => {
  const slug = await board();
  const first = await client.vote(slug, { member: "m1", voter: "v1", idempotencyKey: "k-1" });
  assert.equal(first.replayed, false);
  const again = await client.vote(slug, { member: "m1", voter: "v1", idempotencyKey: "k-1" });
  assert.equal(again.replayed, true);
  const member = await client.member(slug, "m1", { period: "all", view: "real" });
  assert.equal(member.score, 1);
});

test("a vote whose answer is lost is sent again with the same key, and counts once", async () => {
  const slug = await board();
  const sent = [];
  let lost = false;
  const flaky = async (url, init) => {
    sent.push(JSON.parse(init.body).idempotency_key);
    const response = await fetch(url, init);
    if (!lost) {
      lost = true;
      throw new TypeError("fetch failed: the connection dropped");
    }
    return response;
  };
  const retrying = new Ovation({ baseUrl, apiKey, backoffMs: 10, fetch: flaky });
  const result = await retrying.vote(slug, { member: "m1", voter: "v1" });
  assert.equal(sent.length, 2);
  assert.equal(sent[0], sent[1], "the same idempotency key");
  assert.equal(result.replayed, true, "the first attempt had counted");
  assert.equal((await client.member(slug, "m1", { period: "all", view: "real" })).score, 1);
});

test("a refusal is an OvationError with its code, status, details and retryAfter", async () => {
  const slug = await board();
  await admin("POST", `/api/v1/admin/boards/${slug}/rules`, {
    name: "one a day",
    dimensions: ["voter"],
    window: "day",
    limit: 1,
  });
  await client.vote(slug, { member: "m1", voter: "v1" });
  await assert.rejects(client.vote(slug, { member: "m1", voter: "v1" }), (error) => {
    assert.ok(error instanceof OvationError);
    assert.equal(error.code, "rate_limited");
    assert.equal(error.status, 429);
    assert.equal(error.details.rule.name, "one a day");
    assert.ok(error.retryAfter > 0 && error.retryAfter <= 86_400, String(error.retryAfter));
    return true;
  });
  await assert.rejects(client.top("no-such-board"), (error) => {
    assert.equal(error.code, "board_not_found");
    assert.equal(error.status, 404);
    assert.equal(error.retryAfter, null);
    return true;
  });
});

test("a batch answers each vote on its own", async () => {
  const slug = await board();
  const results = await client.votes(
    [
      { board: slug, member: "m1" },
      { board: slug, member: "bad id!" },
    ],
    { voter: "v1" },
  );
  assert.equal(results.length, 2);
  assert.equal(results[0].ok, true);
  assert.equal(results[1].ok, false);
  assert.equal(results[1].error.code, "invalid_member_id");
});

test("reads: top, member, around, ranks, tops, stats and a family's rooms", async () => {
  const slug = await board();
  const other = await board();
  for (const [member, votes] of [["a", 3], ["b", 2], ["c", 1]]) {
    await client.vote(slug, { member, count: votes, voter: "v1" });
  }
  await client.vote(other, { member: "z", voter: "v1" });
  const top = await client.top(slug, { period: "all", view: "real", limit: 2 });
  assert.deepEqual(
    top.entries.map((e) => [e.rank, e.member, e.score]),
    [[1, "a", 3], [2, "b", 2]],
  );
  const around = await client.around(slug, "b", { period: "all", view: "real", radius: 1 });
  assert.deepEqual(around.entries.map((e) => e.member), ["a", "b", "c"]);
  const ranks = await client.ranks(slug, ["c", "a"], { period: "all", view: "real" });
  assert.deepEqual(ranks.members.map((m) => [m.member, m.rank]), [["c", 3], ["a", 1]]);
  const tops = await client.tops([slug, other], { period: "all", view: "real", limit: 1 });
  assert.deepEqual(tops.tops.map((t) => t.entries[0].member), ["a", "z"]);
  const stats = await client.stats(slug, { period: "all" });
  assert.equal(stats.votes, 6);

  const family = await board({ instances: { ttl_s: 600 } });
  await client.vote(`${family}:room-1`, { member: "m1", voter: "v1" });
  await client.vote(`${family}:room-2`, { member: "m1", voter: "v1" });
  const rooms = await client.instances(family);
  assert.deepEqual(rooms.instances.map((i) => i.instance).sort(), ["room-1", "room-2"]);
});

test("subscribe follows a live top until it is closed", async () => {
  const slug = await board();
  await client.vote(slug, { member: "a", count: 2, voter: "v1" });
  await client.vote(slug, { member: "b", voter: "v1" });
  const tops = [];
  const changes = [];
  let resolveSeen;
  const seen = new Promise((resolve) => (resolveSeen = resolve));
  // A top's rank events follow it: done once b has overtaken a.
  const done = () => changes.some((c) => c.type === "overtook" && c.member === "b" && c.other === "a");
  const subscription = client.subscribe(
    slug,
    { period: "all", view: "real", top: 5, member: "b" },
    {
      onTop: (top, mine) => {
        tops.push([top.entries.map((e) => `${e.member}:${e.score}`).join(","), mine?.rank ?? null]);
      },
      onRank: (change) => {
        changes.push(change);
        if (done()) resolveSeen();
      },
      onError: (error) => assert.fail(error),
    },
  );
  try {
    await new Promise((resolve) => setTimeout(resolve, 500));
    await client.vote(slug, { member: "b", count: 2, voter: "v2" });
    await Promise.race([
      seen,
      new Promise((_, reject) =>
        setTimeout(() => reject(new Error(`no update: ${JSON.stringify({ tops, changes })}`)), 10_000),
      ),
    ]);
  } finally {
    subscription.close();
  }
  assert.deepEqual(tops[0], ["a:2,b:1", 2]);
  assert.deepEqual(tops.at(-1), ["b:3,a:2", 1]);
  assert.ok(done());
  const after = tops.length;
  await client.vote(slug, { member: "c", count: 5, voter: "v3" });
  await new Promise((resolve) => setTimeout(resolve, 2_000));
  assert.equal(tops.length, after, "nothing after close()");
});

test("a broken stream resumes with Last-Event-ID and gets what it missed, not the top again", async () => {
  const slug = await board();
  await client.vote(slug, { member: "a", count: 2, voter: "v1" });
  const asked = [];
  let breakStream;
  const breakable = async (url, init) => {
    asked.push(init.headers["last-event-id"] ?? null);
    const response = await fetch(url, init);
    const reader = response.body.getReader();
    const body = new ReadableStream({
      start(controller) {
        breakStream = () => controller.error(new TypeError("terminated: the connection dropped"));
      },
      async pull(controller) {
        const { value, done } = await reader.read();
        if (done) controller.close();
        else controller.enqueue(value);
      },
    });
    return new Response(body, { status: response.status, headers: response.headers });
  };
  const following = new Ovation({ baseUrl, apiKey, fetch: breakable });
  const tops = [];
  const errors = [];
  let onTopSeen;
  const topSeen = () => new Promise((resolve) => (onTopSeen = resolve));
  let next = topSeen();
  const subscription = following.subscribe(
    slug,
    { period: "all", view: "real", top: 5 },
    {
      onTop: (top) => {
        tops.push(top.entries.map((e) => `${e.member}:${e.score}`).join(","));
        onTopSeen();
      },
      onError: (error) => errors.push(error.code),
    },
    1_500,
  );
  const within = (promise, what) =>
    Promise.race([
      promise,
      new Promise((_, reject) => setTimeout(() => reject(new Error(`${what}: ${JSON.stringify(tops)}`)), 10_000)),
    ]);
  try {
    await within(next, "the first top");
    next = topSeen();
    // The stream breaks; a vote lands while the client waits to reconnect.
    breakStream();
    await client.vote(slug, { member: "b", count: 3, voter: "v2" });
    await within(next, "the missed change");
  } finally {
    subscription.close();
  }
  assert.deepEqual(errors, ["network_error"]);
  assert.equal(asked.length, 2);
  assert.equal(asked[0], null);
  assert.match(asked[1], /^[0-9a-f]+-0$/, "the first top's id");
  assert.deepEqual(tops, ["a:2", "b:3,a:2"], "the change it missed, and no fresh top");
});

test("a voter's token votes as its voter", async () => {
  const name = `p-${randomUUID().slice(0, 8)}`;
  const provider = await admin("POST", "/api/v1/admin/identity-providers", {
    name,
    kind: "hmac",
    issuer: `https://${name}.example`,
    audience: "client-test",
  });
  const slug = await board({ identity_providers: [name] });
  await admin("POST", `/api/v1/admin/boards/${slug}/rules`, {
    name: "one a day",
    dimensions: ["voter"],
    window: "day",
    limit: 1,
  });
  const now = Math.floor(Date.now() / 1000);
  const part = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "HS256", typ: "JWT" })}.${part({
    iss: `https://${name}.example`,
    aud: "client-test",
    sub: "fan-9",
    iat: now,
    exp: now + 600,
  })}`;
  const signature = createHmac("sha256", provider.secret).update(unsigned).digest("base64url");
  const voter = new Ovation({ baseUrl, voterToken: () => `${unsigned}.${signature}` });
  const result = await voter.vote(slug, { member: "m1" });
  assert.equal(result.replayed, false);
  await assert.rejects(voter.vote(slug, { member: "m2" }), { code: "rate_limited" });
  await assert.rejects(voter.vote(slug, { member: "m1", voter: "someone-else" }), {
    code: "voter_mismatch",
    status: 403,
  });
});
