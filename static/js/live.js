// Live blocks: an element with `sse-connect` and `data-poll` follows its server-sent
// events (htmx's SSE extension swaps each one in). Where the stream is unavailable (no
// EventSource in the browser, or the server refuses it: 503 `too_many_streams`), the
// element polls `data-poll` every `data-poll-ms` instead: a page never does both.
//
// A vote's answer shows inside the block (the member's card), so while a vote is on its
// way and for `data-poll-ms` after its answer, updates are held back; the latest one is
// shown when the hold ends.
(() => {
  const blocks = document.querySelectorAll("[sse-connect][data-poll]");

  const follow = (block) => {
    const every = Number(block.dataset.pollMs);
    let sending = false;
    let holdUntil = 0;
    let held = null;
    let polling = false;
    const holding = () => sending || Date.now() < holdUntil;

    const poll = () => {
      if (polling) return;
      polling = true;
      block.removeAttribute("sse-connect");
      window.setInterval(() => {
        if (!holding()) {
          htmx.ajax("GET", block.dataset.poll, { target: block, swap: "innerHTML" });
        }
      }, every);
    };

    const release = () => {
      if (holding()) return;
      if (held !== null) {
        htmx.swap(block, held, { swapStyle: "innerHTML" });
        held = null;
      }
    };

    // A vote is a POST from a card's form (polls are GETs). Its answer replaces the card,
    // so htmx tells `afterRequest` to the closest element left: still inside the block.
    const isVote = (e) => e.detail.requestConfig && e.detail.requestConfig.verb === "post";
    block.addEventListener("htmx:beforeRequest", (e) => {
      if (isVote(e)) sending = true;
    });
    block.addEventListener("htmx:afterRequest", (e) => {
      if (!isVote(e)) return;
      sending = false;
      holdUntil = Date.now() + every;
      window.setTimeout(release, every + 10);
    });
    block.addEventListener("htmx:sseBeforeMessage", (e) => {
      if (e.target !== block || !holding()) return;
      e.preventDefault();
      held = e.detail.data;
    });
    block.addEventListener("htmx:sseError", (e) => {
      // CLOSED: the server answered the stream with an error; the browser will not retry.
      if (e.detail.source.readyState === EventSource.CLOSED) {
        e.detail.source.close();
        poll();
      }
    });

    if (typeof EventSource === "undefined") poll();
  };

  blocks.forEach(follow);
})();
