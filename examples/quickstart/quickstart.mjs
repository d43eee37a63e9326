import { Ovation } from "ovation-client";

const ovation = new Ovation({ baseUrl: process.env.OVATION_URL, apiKey: process.env.OVATION_KEY });
await ovation.vote("talent", { member: "m3", voter: "user-42" });
const live = ovation.subscribe("talent", { period: "day", top: 10 }, {
  onTop: (top) => console.log(top.entries.map((e) => `${e.rank}. ${e.member} ${e.score}`).join("\n")),
  onRank: (change) => change.type === "overtook" && console.log(`${change.member} passes ${change.other}!`),
});
process.on("SIGINT", () => live.close());
