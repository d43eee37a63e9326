// Signing in on a voting page whose board takes signed-in voters only. The identity
// provider's sign-in sends the visitor back to the page with `#token=<JWT>` (a fragment:
// it never reaches a server's log). The page keeps the token for the visit (this tab's
// sessionStorage), drops it from the address, shows which account votes, and sends the
// token with each vote. An expired token is dropped, and a vote then leads back to
// sign-in; so does a vote the server refuses for its token (header
// `X-Ovation-Sign-In: again`). In a frame, the embedding page may hand the token over
// with `postMessage({type: "ovation:token", token})` from a listed origin.
(() => {
  const box = document.getElementById("signin");
  if (!box) return;
  const key = "ovation-token:" + box.dataset.board;
  const origins = (box.dataset.origins || "").split(" ").filter((o) => o);
  const link = box.querySelector(".signin-link");
  const account = box.querySelector(".account");
  const who = box.querySelector(".account-name");

  const fragment = location.hash.match(/[#&]token=([^&]+)/);
  if (fragment) {
    sessionStorage.setItem(key, decodeURIComponent(fragment[1]));
    history.replaceState(null, "", location.pathname + location.search);
  }

  const claims = (token) => {
    try {
      const part = token.split(".")[1].replace(/-/g, "+").replace(/_/g, "/");
      return JSON.parse(atob(part + "=".repeat((4 - (part.length % 4)) % 4)));
    } catch (_) {
      return null;
    }
  };

  // The token kept, unless it has expired (then it is dropped).
  const current = () => {
    const token = sessionStorage.getItem(key);
    if (!token) return null;
    const c = claims(token);
    if (!c || typeof c.exp !== "number" || c.exp * 1000 <= Date.now()) {
      sessionStorage.removeItem(key);
      return null;
    }
    return { token, claims: c };
  };

  const show = () => {
    const signedIn = current();
    link.hidden = signedIn !== null;
    account.hidden = signedIn === null;
    who.textContent = signedIn ? String(signedIn.claims[box.dataset.claim] ?? "") : "";
  };

  const signIn = () => {
    sessionStorage.removeItem(key);
    if (link.href) location.href = link.href;
    else show();
  };

  window.addEventListener("message", (e) => {
    const data = e.data;
    if (!origins.includes(e.origin) || !data || data.type !== "ovation:token") return;
    if (typeof data.token !== "string") return;
    sessionStorage.setItem(key, data.token);
    show();
  });

  // Every vote (a POST from a card's form) carries the token; without one, sign in.
  document.body.addEventListener("htmx:configRequest", (e) => {
    if (e.detail.verb !== "post") return;
    const signedIn = current();
    if (!signedIn) {
      e.preventDefault();
      signIn();
      return;
    }
    e.detail.parameters["voter_token"] = signedIn.token;
  });
  document.body.addEventListener("htmx:afterRequest", (e) => {
    const xhr = e.detail.xhr;
    if (xhr && xhr.getResponseHeader("X-Ovation-Sign-In") === "again") signIn();
  });

  show();
  window.setInterval(show, 5000);
})();
