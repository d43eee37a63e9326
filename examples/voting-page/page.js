// A voting page of your own on ovation-client: your own design and candidates, votes
// sent straight to Ovation with the voter's token, and the ranking kept live.
//   page.html?server=https://vote.example&board=talent&period=day#token=<voter token>
// Your sign-in sends visitors back with their token in the fragment (as Ovation's own
// voting page expects); the page keeps it for the visit. The board lists this page's
// origin in `embed_origins` (votes) and the server in OVATION_CORS_ORIGINS (reads).
import { Ovation } from "ovation-client";

const params = new URLSearchParams(location.search);
const server = params.get("server") ?? "https://vote.example";
const board = params.get("board") ?? "talent";
const period = params.get("period") ?? "day";

const fromFragment = new URLSearchParams(location.hash.slice(1)).get("token");
if (fromFragment) {
  sessionStorage.setItem("voter-token", fromFragment);
  history.replaceState(null, "", location.pathname + location.search);
}
const token = sessionStorage.getItem("voter-token");

const ovation = new Ovation({ baseUrl: server, voterToken: () => token ?? "" });
const buttons = [...document.querySelectorAll("button[data-member]")];
const names = Object.fromEntries(buttons.map((b) => [b.dataset.member, b.textContent]));
const status = document.getElementById("status");

/** The voter a token names (its `sub`), for "Voting as …". */
function voterOf(jwt) {
  try {
    const payload = jwt.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
    return JSON.parse(atob(payload)).sub ?? null;
  } catch {
    return null;
  }
}

/** What to tell the voter about a refusal, by its code. */
function refusal(error) {
  switch (error.code) {
    case "rate_limited":
      return error.retryAfter
        ? `You have used your votes for now: try again in ${error.retryAfter} s.`
        : "You have used your votes for now.";
    case "token_expired":
    case "token_too_old":
    case "token_required":
      return "Your sign-in has expired: sign in again to vote.";
    case "board_closed":
      return "Voting has closed.";
    default:
      return `Your vote was not counted (${error.message}).`;
  }
}

if (token) {
  document.getElementById("who").textContent = `Voting as ${voterOf(token) ?? "you"}.`;
  for (const button of buttons) {
    button.disabled = false;
    button.addEventListener("click", async () => {
      const member = button.dataset.member;
      buttons.forEach((b) => (b.disabled = true));
      try {
        // One idempotency key per click, reused by the client's own retries.
        await ovation.vote(board, { member });
        status.textContent = `Thank you: your vote for ${names[member]} counts.`;
      } catch (error) {
        status.textContent = refusal(error);
      } finally {
        buttons.forEach((b) => (b.disabled = false));
      }
    });
  }
}

const list = document.getElementById("top");
ovation.subscribe(board, { period, top: 10 }, {
  onTop: (top) => {
    if (top.entries.length === 0) return;
    list.replaceChildren(
      ...top.entries.map((entry) => {
        const item = document.createElement("li");
        item.dataset.member = entry.member;
        const name = document.createElement("span");
        name.textContent = names[entry.member] ?? entry.name ?? entry.member;
        const score = document.createElement("b");
        score.textContent = String(entry.score);
        item.append(name, score);
        return item;
      }),
    );
  },
});
