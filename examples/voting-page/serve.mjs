// Serves this page and the built ovation-client (../../clients/typescript/dist, as
// ./ovation-client/) on 127.0.0.1, for trying the page out; in production any static
// host does.   PORT=8000 node serve.mjs   (PORT=0: a free port, printed)
import { createServer } from "node:http";
import { readFile } from "node:fs/promises";
import { extname, normalize } from "node:path";
import { fileURLToPath } from "node:url";

const here = fileURLToPath(new URL(".", import.meta.url));
const client = fileURLToPath(new URL("../../clients/typescript/dist/", import.meta.url));
const types = { ".html": "text/html; charset=utf-8", ".js": "text/javascript; charset=utf-8" };

const server = createServer(async (req, res) => {
  const path = normalize(decodeURIComponent(new URL(req.url, "http://x").pathname));
  const file = path === "/"
    ? `${here}index.html`
    : path.startsWith("/ovation-client/")
      ? client + path.slice("/ovation-client/".length)
      : here + path.slice(1);
  if (path.includes("..") || !types[extname(file)]) {
    res.writeHead(404).end();
    return;
  }
  try {
    const body = await readFile(file);
    res.writeHead(200, { "content-type": types[extname(file)] }).end(body);
  } catch {
    res.writeHead(404).end();
  }
});
server.listen(Number(process.env.PORT ?? 8000), "127.0.0.1", () =>
  console.log(`serving on http://127.0.0.1:${server.address().port}/`),
);
