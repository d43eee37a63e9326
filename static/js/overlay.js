// The stream overlay: the board's top, live. Each `top` event of the stream (or, where
// the stream is refused, each poll of the top) redraws the rows; a row that changed place
// slides from where it was (its offset set, then eased to nothing), a new one fades in.
(() => {
  const list = document.getElementById("overlay");
  if (!list) return;
  const decimals = Number(list.dataset.decimals);
  const format = (score) =>
    Number(score).toLocaleString(list.dataset.lang, { maximumFractionDigits: decimals });

  const row = (member) => {
    const li = document.createElement("li");
    li.dataset.member = member;
    for (const part of ["rank", "name", "score"]) {
      const span = document.createElement("span");
      span.className = part;
      li.append(span);
    }
    li.classList.add("entering");
    return li;
  };

  const draw = (entries) => {
    const before = new Map([...list.children].map((li) => [li.dataset.member, li.getBoundingClientRect().top]));
    const rows = entries.map((entry) => {
      const li = [...list.children].find((c) => c.dataset.member === entry.member) ?? row(entry.member);
      li.querySelector(".rank").textContent = String(entry.rank);
      li.querySelector(".name").textContent = entry.name ?? entry.member;
      li.querySelector(".score").textContent = format(entry.score);
      return li;
    });
    list.replaceChildren(...rows);
    for (const li of rows) {
      const was = before.get(li.dataset.member);
      const shift = was === undefined ? 0 : was - li.getBoundingClientRect().top;
      if (shift !== 0) {
        li.style.transition = "none";
        li.style.transform = `translateY(${shift}px)`;
      }
      requestAnimationFrame(() =>
        requestAnimationFrame(() => {
          li.style.transition = "";
          li.style.transform = "";
          li.classList.remove("entering");
        }),
      );
    }
  };

  let polling = false;
  const poll = () => {
    if (polling) return;
    polling = true;
    list.dataset.live = "poll";
    window.setInterval(async () => {
      const answer = await fetch(list.dataset.poll).catch(() => null);
      if (answer && answer.ok) draw((await answer.json()).entries);
    }, Number(list.dataset.pollMs));
  };
  if (!window.EventSource) {
    poll();
    return;
  }
  const events = new EventSource(list.dataset.stream);
  // What the overlay follows, for whoever inspects it: `stream`, or `poll`.
  events.addEventListener("open", () => (list.dataset.live = "stream"));
  events.addEventListener("top", (e) => draw(JSON.parse(e.data).entries));
  // A refused stream (503, 429, 404) is closed for good: poll instead.
  events.addEventListener("error", () => {
    if (events.readyState === EventSource.CLOSED) poll();
  });
})();
