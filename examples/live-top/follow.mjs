// Follows a board's live top and prints it at each change:
//   OVATION_URL=https://vote.example node follow.mjs <board> [period]
// OVATION_KEY is needed for a board that is not public; UPDATES=n stops after n tops.
import { Ovation } from "../../clients/typescript/dist/index.js";

const [board, period = "day"] = process.argv.slice(2);
if (!board) {
  console.error("usage: node follow.mjs <board> [period]");
  process.exit(2);
}
const ovation = new Ovation({
  baseUrl: process.env.OVATION_URL ?? "http://127.0.0.1:8080",
  apiKey: process.env.OVATION_KEY || undefined,
});
const updates = Number(process.env.UPDATES ?? Infinity);
let seen = 0;
const live = ovation.subscribe(board, { period, top: 10 }, {
  onTop: (top) => {
    console.log(`-- ${board} ${top.bucket}`);
    for (const entry of top.entries) console.log(`${entry.rank}. ${entry.name ?? entry.member} ${entry.score}`);
    if (++seen >= updates) live.close();
  },
  onRank: (change) => {
    if (change.type === "overtook") console.log(`${change.member} passes ${change.other}`);
  },
  onError: (error) => console.error(`${error.code}: ${error.message}`),
});
