// Fails when the two files differ: src/schema.ts must be what openapi-typescript makes
// of docs/openapi.json (run `npm run generate` after changing the API).
import { readFileSync, rmSync } from "node:fs";

const [committed, fresh] = process.argv.slice(2);
const same = readFileSync(committed, "utf8") === readFileSync(fresh, "utf8");
rmSync(fresh);
if (!same) {
  console.error(`${committed} is not generated from docs/openapi.json: run \`npm run generate\` in clients/typescript`);
  process.exit(1);
}
