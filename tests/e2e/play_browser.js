// Plays a whole set of `hus play --web` in headless Chromium (cdp.js), the way a person
// does: waits for the page to say it is the person's turn, clicks the first
// highlighted pit with real mouse events, waits for the page to change. On the first
// turn it also tries what must be refused: a click on a pit that is not legal, and
// posts from the page of garbage JSON, an illegal pit, a stale ply, the wrong content
// type, an oversized body, another tab's id; and opens a second tab, which must be
// told the game is open elsewhere. Prints one JSON object with what it saw.
// Usage: node play_browser.js URL
"use strict";
const { launch, until } = require("./cdp.js");

const url = process.argv[2];
// A hang, not a slow machine: the script fails when the page has not changed for this
// long (a set of two games is a hundred clicks or more, and a loaded machine with
// Chromium takes seconds per click; a limit on the whole set would measure the load).
const STALL_MS = 120000;
const browser = launch();

function finish(code, out) {
  process.stdout.write(JSON.stringify(out) + "\n");
  browser.close();
  process.exit(code);
}
let seen = { seq: null, phase: null, at: Date.now(), clicks: 0 };
setInterval(() => {
  if (Date.now() - seen.at > STALL_MS) {
    finish(1, { error: "the page did not change for " + STALL_MS + " ms (phase " + seen.phase +
      ", after " + seen.clicks + " clicks)" });
  }
}, 1000);

const STATE = `(() => { const d = document.body ? document.body.dataset : {};
  return { phase: d.phase || null, seq: Number(d.seq || -1), game: d.game || '', ply: d.ply || '',
           legal: d.legal ? d.legal.split(',').map(Number) : [], check: d.check || null,
           error: document.getElementById('play-error') && !document.getElementById('play-error').hidden
             ? document.getElementById('play-error').textContent : null }; })()`;

// A post from inside the page (same origin, the page's own policy): status and body.
const post = (body, headers) => `fetch('/api/move', { method: 'POST', headers: ${JSON.stringify(headers)},
  body: ${JSON.stringify(body)} }).then((r) => r.text().then((t) => ({ status: r.status, body: t })))`;

async function click(page, selector) {
  const box = await page.evaluate(`(() => { const e = document.querySelector(${JSON.stringify(selector)});
    if (!e) return null; e.scrollIntoView({ block: 'center' }); const r = e.getBoundingClientRect();
    return { x: r.left + r.width / 2, y: r.top + r.height / 2 }; })()`);
  if (!box) throw new Error("nothing to click at " + selector);
  for (const type of ["mouseMoved", "mousePressed", "mouseReleased"]) {
    await page.send("Input.dispatchMouseEvent", { type, x: box.x, y: box.y, button: "left", clickCount: 1 });
  }
}

async function main() {
  const page = await browser.open(url);
  const state = async () => {
    const s = await page.evaluate(STATE);
    if (s.seq !== seen.seq || s.phase !== seen.phase) seen = { seq: s.seq, phase: s.phase, at: Date.now(), clicks };
    return s;
  };
  const refused = {};
  let clicks = 0;
  let first = true;
  for (;;) {
    const s = await until(async () => {
      const s = await state();
      return s.phase === "your-turn" || s.phase === "over" || s.phase === "stopped" ? s : null;
    });
    if (s.phase !== "your-turn") break;
    if (first) {
      first = false;
      // A pit of the person's that is not legal: the page says so and sends nothing.
      const illegal = [...Array(16).keys()].find((p) => s.legal.indexOf(p) < 0);
      await click(page, "#pit-0-" + illegal);
      refused.click = await page.evaluate(`document.getElementById('play-error').textContent`);
      const tab = await page.evaluate(`document.body.dataset.tab`);
      const json = { "Content-Type": "application/json" };
      const move = (pit, ply) => JSON.stringify({ tab, game: Number(s.game), ply, pit });
      refused.garbage = await page.evaluate(post("{\"tab\": nonsense", json));
      refused.illegal = await page.evaluate(post(move(illegal, Number(s.ply)), json));
      refused.stale = await page.evaluate(post(move(s.legal[0], Number(s.ply) + 2), json));
      refused.text_plain = await page.evaluate(post(move(s.legal[0], Number(s.ply)), { "Content-Type": "text/plain" }));
      refused.oversized = await page.evaluate(post(JSON.stringify({ tab, pad: "x".repeat(4000) }), json));
      refused.other_tab = await page.evaluate(post(JSON.stringify({ tab: "another-tab-id", game: Number(s.game),
        ply: Number(s.ply), pit: s.legal[0] }), json));
      // A second tab: told the game is open elsewhere, and it changes nothing.
      const second = await browser.open(url);
      refused.second_tab = await until(() => second.evaluate(`document.body && document.body.dataset.phase === 'taken'
        ? document.getElementById('status').textContent : null`));
      await second.close();
      const after = await state();
      refused.unchanged = after.phase === "your-turn" && after.ply === s.ply && after.seq === s.seq;
    }
    await click(page, "#pit-0-" + s.legal[0]);
    clicks += 1;
    // The page moves on: the bot's answer (a new ply), or the end of the game.
    const next = await until(async () => {
      const n = await state();
      if (n.error) return n;
      return n.seq > s.seq && (n.phase !== "your-turn" || n.ply !== s.ply || n.game !== s.game) ? n : null;
    });
    if (next.error) finish(1, { error: "the move was refused: " + next.error, refused });
  }
  const end = await page.evaluate(`({ phase: document.body.dataset.phase, outcome: document.body.dataset.outcome || null,
    points: document.body.dataset.points || null, check: document.body.dataset.check || null,
    result: document.getElementById('set-result').textContent, status: document.getElementById('status').textContent,
    moves: document.querySelectorAll('#moves li').length,
    games: document.querySelectorAll('#end-info .game-result').length,
    you: document.querySelectorAll('#moves li.you').length,
    check_error_hidden: document.getElementById('check-error').hidden,
    check_error: document.getElementById('check-error').textContent })`);
  finish(0, { clicks, refused, end });
}

main().catch((e) => finish(1, { error: String(e.stack || e) }));
