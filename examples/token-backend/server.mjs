// A small backend beside Ovation, for an operator whose users sign in to their own app:
//   POST /token   mints a voter token (HS256) for the signed-in user, from the secret of
//                 an `hmac` identity provider: browsers then vote straight to Ovation;
//   POST /vote/<board> {"member"}  votes for the user with a `trusted` key instead,
//                 naming the user and the user's address.
// Who the user is comes from your own sign-in; this example reads it from `X-User`.
//   OVATION_URL=… PROVIDER_SECRET=… ISSUER=… AUDIENCE=… TRUSTED_KEY=… PORT=3000 node server.mjs
import { createServer } from "node:http";
import { createHmac } from "node:crypto";

const { OVATION_URL, PROVIDER_SECRET, ISSUER, AUDIENCE, TRUSTED_KEY, PORT = "3000" } = process.env;
const TOKEN_LIFETIME_S = 15 * 60;

function mint(user) {
  const now = Math.floor(Date.now() / 1000);
  const part = (value) => Buffer.from(JSON.stringify(value)).toString("base64url");
  const unsigned = `${part({ alg: "HS256", typ: "JWT" })}.${part({
    iss: ISSUER,
    aud: AUDIENCE,
    sub: user,
    iat: now,
    exp: now + TOKEN_LIFETIME_S,
  })}`;
  return `${unsigned}.${createHmac("sha256", PROVIDER_SECRET).update(unsigned).digest("base64url")}`;
}

async function body(req) {
  const chunks = [];
  for await (const chunk of req) chunks.push(chunk);
  return chunks.length ? JSON.parse(Buffer.concat(chunks).toString("utf8")) : {};
}

const server = createServer(async (req, res) => {
  const reply = (status, value) => {
    res.writeHead(status, { "content-type": "application/json" });
    res.end(JSON.stringify(value));
  };
  const user = req.headers["x-user"];
  if (typeof user !== "string" || user === "") return reply(401, { error: "sign in first" });
  if (req.method === "POST" && req.url === "/token") return reply(200, { token: mint(user) });
  const vote = req.method === "POST" && req.url?.match(/^\/vote\/([^/]+)$/);
  if (vote) {
    const { member } = await body(req);
    const answer = await fetch(`${OVATION_URL}/api/v1/boards/${vote[1]}/votes`, {
      method: "POST",
      headers: { authorization: `Bearer ${TRUSTED_KEY}`, "content-type": "application/json" },
      body: JSON.stringify({ member, voter: user, ip: req.socket.remoteAddress?.replace(/^::ffff:/, "") }),
    });
    return reply(answer.status, await answer.json());
  }
  reply(404, { error: "no such route" });
});
server.listen(Number(PORT), "127.0.0.1", () => console.log(`listening on ${server.address().port}`));
