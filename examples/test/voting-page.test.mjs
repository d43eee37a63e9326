// The voting-page example in a real headless Chromium (Debian's chromium and
// chromium-driver, which make test installs), driven over WebDriver: a signed-in voter
// votes from the page's own origin, sees the ranking move live, and is told when a rule
// refuses. scripts/test-clients.sh sets OVATION_URL, OVATION_KEY (a master key) and
// EXAMPLE_PAGE_PORT, the port whose origin the server lists in OVATION_CORS_ORIGINS.
import { test } from "node:test";
import assert from "node:assert/strict";
import { spawn } from "node:child_process";
import { createHmac, randomUUID } from "node:crypto";
import { createServer } from "node:net";
import { fileURLToPath } from "node:url";

import { admin, baseUrl, newBoard } from "./server.mjs";

const pagePort = process.env.EXAMPLE_PAGE_PORT;
assert.ok(pagePort, "EXAMPLE_PAGE_PORT is set");
const pageOrigin = `http://127.0.0.1:${pagePort}`;

function mint(secret, issuer, user) {
  const now = Math.floor(Date.now() / 1000);
  const part = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "HS256", typ: "JWT" })}.${part({
    iss: issuer, aud: "ovation", sub: user, iat: now, exp: now + 600,
  })}`;
  return `${unsigned}.${createHmac("sha256", secret).update(unsigned).digest("base64url")}`;
}

const freePort = () =>
  new Promise((resolve) => {
    const probe = createServer().listen(0, "127.0.0.1", () => {
      const { port } = probe.address();
      probe.close(() => resolve(port));
    });
  });

async function until(what, check, ms = 5_000) {
  const deadline = Date.now() + ms;
  let last;
  while (Date.now() < deadline) {
    last = await check();
    if (last) return last;
    await new Promise((resolve) => setTimeout(resolve, 100));
  }
  assert.fail(`${what} within ${ms} ms (last: ${JSON.stringify(last)})`);
}

/** A Chromium session under a ChromeDriver on a free port; `stop()` ends both. */
async function chromium() {
  const port = await freePort();
  const driver = spawn("chromedriver", [`--port=${port}`], { stdio: "ignore" });
  const started = new Promise((_, reject) => driver.on("error", () =>
    reject(new Error("chromedriver must be installed (make test installs chromium-driver)"))));
  const call = async (method, path, body) => {
    const response = await fetch(`http://127.0.0.1:${port}${path}`, {
      method,
      headers: { "content-type": "application/json" },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
    const answer = await response.json();
    if (!response.ok) throw new Error(`${method} ${path}: ${JSON.stringify(answer.value)}`);
    return answer.value;
  };
  await Promise.race([started, until("chromedriver ready", () => call("GET", "/status").then((s) => s.ready, () => false), 10_000)]);
  const { sessionId } = await call("POST", "/session", {
    capabilities: {
      alwaysMatch: {
        "goog:chromeOptions": {
          binary: "/usr/bin/chromium",
          args: ["--headless=new", "--no-sandbox", "--disable-gpu", "--no-first-run",
            "--disable-background-networking", "--disable-component-update", "--disable-sync"],
        },
      },
    },
  });
  const at = `/session/${sessionId}`;
  const element = async (css) =>
    Object.values(await call("POST", `${at}/element`, { using: "css selector", value: css }))[0];
  return {
    open: (url) => call("POST", `${at}/url`, { url }),
    run: (script, ...args) => call("POST", `${at}/execute/sync`, { script, args }),
    click: async (css) => call("POST", `${at}/element/${await element(css)}/click`, {}),
    text: async (css) => call("GET", `${at}/element/${await element(css)}/text`),
    stop: async () => {
      await call("DELETE", at).catch(() => {});
      driver.kill();
    },
  };
}

test("a voter votes from a page of one's own, sees the ranking live, and is told a rule's refusal", async () => {
  const name = `site-${randomUUID().slice(0, 8)}`;
  const issuer = `https://${name}.example`;
  const provider = await admin("POST", "/api/v1/admin/identity-providers", {
    name, kind: "hmac", issuer, audience: "ovation",
  });
  const board = await newBoard({
    periods: ["day"], public_page: true,
    voters: "signed_in", identity_providers: [name], embed_origins: [pageOrigin],
  });
  await admin("POST", `/api/v1/admin/boards/${board}/rules`, {
    name: "two a day", dimensions: ["voter"], window: "day", limit: 2,
  });
  const page = spawn(process.execPath, [fileURLToPath(new URL("../voting-page/serve.mjs", import.meta.url))], {
    env: { ...process.env, PORT: pagePort },
    stdio: ["ignore", "pipe", "inherit"],
  });
  await new Promise((resolve) => page.stdout.once("data", resolve));
  let browser;
  const ranking = () => browser.run(
    "return [...document.querySelectorAll('#top li')].map((li) => li.innerText.replace(/\\s+/g, ' '))",
  );
  try {
    browser = await chromium();
    const token = mint(provider.secret, issuer, "alice");
    await browser.open(`${pageOrigin}/?server=${encodeURIComponent(baseUrl)}&board=${board}&period=day#token=${token}`);
    await until("the voter shown", async () => (await browser.text("#who")) === "Voting as alice.");
    assert.equal(await browser.run("return location.hash"), "", "the token left the address");

    await browser.click("button[data-member=grace]");
    await until("the thanks", async () =>
      (await browser.text("#status")) === "Thank you: your vote for Grace counts.");
    await until("the vote in the live ranking", async () =>
      JSON.stringify(await ranking()) === JSON.stringify(["Grace 1"]));

    // A vote from elsewhere shows live.
    await admin("POST", `/api/v1/boards/${board}/votes`, { member: "ada", count: 2, voter: "bob" });
    await until("another's vote in the live ranking", async () =>
      JSON.stringify(await ranking()) === JSON.stringify(["Ada 2", "Grace 1"]), 2_000);

    // The second vote of the day counts; the third is refused, and counts nothing.
    await browser.click("button[data-member=ada]");
    await until("the second thanks", async () =>
      (await browser.text("#status")) === "Thank you: your vote for Ada counts.");
    await browser.click("button[data-member=ada]");
    const told = await until("the refusal", async () => {
      const text = await browser.text("#status");
      return text.startsWith("You have used your votes for now") ? text : null;
    });
    assert.match(told, /^You have used your votes for now: try again in \d+ s\.$/);
    const top = await admin("GET", `/api/v1/boards/${board}/top?period=day&view=real`);
    assert.deepEqual(top.entries.map((e) => [e.member, e.score]), [["ada", 3], ["grace", 1]]);

    // The token is kept for the visit.
    await browser.open(`${pageOrigin}/?server=${encodeURIComponent(baseUrl)}&board=${board}`);
    await until("the voter still shown", async () => (await browser.text("#who")) === "Voting as alice.");
  } finally {
    await browser?.stop();
    page.kill();
  }
});
