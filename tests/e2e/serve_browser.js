// Drives headless Chromium over the DevTools pipe (cdp.js) for
// the `hus serve` browser test: loads the dashboard at argv[2], follows the first live
// set's card ply by ply until it says the set finished, capturing its board (the pit
// counts of the SVG that HusBoard draws) once and again when it has changed, opens the
// set's live view with Enter on the focused card, then the set's page and its replay,
// and prints one JSON object with what it saw (the seeds as shown). Node's standard
// library only.
"use strict";
const { launch, sleep } = require("./cdp.js");

const url = process.argv[2];
const LIMIT_MS = 120000;
const browser = launch();

function finish(code, out) {
  process.stdout.write(JSON.stringify(out) + "\n");
  browser.close();
  process.exit(code);
}

setTimeout(() => finish(1, { error: "no result within " + LIMIT_MS + " ms" }), LIMIT_MS);

async function main() {
  const tab = await browser.open(url);
  const evaluate = tab.evaluate;
  const send = tab.send;

  // The first set that starts after the page is up (one already running may be near
  // its end); then its ply, polled, until its card says the set finished.
  await sleep(500);
  const old = new Set(await evaluate(`Array.from(document.querySelectorAll('.live-set')).map((c) => c.dataset.set)`));
  // The live view the card's Enter opened: its set, its title and its board.
  const liveView = () => evaluate(`(() => {
    const f = document.getElementById('live-focus');
    if (!f) return null;
    const h = f.querySelector('h2');
    return { hash: location.hash, set: f.dataset.set, title: h ? h.firstChild.textContent : null,
             pits: f.querySelectorAll('svg.live-board .pit .count').length };
  })()`);
  let set = null;
  const plies = [];
  let state = null;
  let announced = null;
  let bots = null;
  let liveHref = null;
  const boards = []; // the first board seen after a move, and the first that differs from it
  let focus = null;
  let direct = null;
  async function openDirect(set) {
    const other = await browser.open(url + "#/live/" + encodeURIComponent(set));
    let seen = null;
    for (let i = 0; i < 200 && !(seen && seen.game); i++) {
      await sleep(50);
      seen = await other.evaluate(`(() => {
        const f = document.getElementById('live-focus');
        if (!f) return null;
        const game = f.querySelector('.live-game');
        const score = f.querySelector('.live-score');
        return { set: f.dataset.set, text: f.textContent, title: document.title,
                 game: game ? Number(game.textContent) : null,
                 of: game ? game.parentNode.textContent : null,
                 score: score ? score.dataset.points : null };
      })()`);
    }
    await other.close();
    return seen;
  }
  const started = Date.now();
  while (Date.now() - started < LIMIT_MS - 20000) {
    const seen = await evaluate(`(() => {
      const old = new Set(${JSON.stringify([...old])});
      const card = Array.from(document.querySelectorAll('.live-set'))
        .find((c) => ${set ? "c.dataset.set === " + JSON.stringify(set) : "!old.has(c.dataset.set)"});
      if (!card) return null;
      const ply = card.querySelector('.live-ply');
      const game = card.querySelector('.live-game');
      const a = Array.from(card.querySelectorAll('.announced')).map((x) => x.textContent).join(' | ');
      // The board as drawn: pits[player][pit], the SVG's counts by their data-player and data-pit.
      const counts = Array.from(card.querySelectorAll('svg.live-board .pit .count'));
      const pits = [[], []];
      for (const c of counts) pits[Number(c.dataset.player)][Number(c.dataset.pit)] = Number(c.textContent);
      return { set: card.dataset.set, state: card.dataset.state, tag: card.tagName, href: card.href,
               game: game ? Number(game.textContent) : null, ply: ply ? Number(ply.textContent) : null,
               bots: Array.from(card.querySelectorAll('h3 > .live-bot')).map((b) => b.firstChild.textContent),
               pits: counts.length ? pits : null, announced: a || null,
               clocks: Array.from(card.querySelectorAll('.live-clock')).map((c) => Number(c.dataset.ms)) };
    })()`);
    if (seen) {
      set = seen.set;
      if (seen.announced) announced = seen.announced;
      if (seen.state === "playing") { liveHref = seen.href; bots = seen.bots; }
      // Game * 1000 + ply: in order over the set's games.
      const at = seen.game * 1000 + seen.ply;
      if (seen.ply > 0 && plies[plies.length - 1] !== at) plies.push(at);
      if (seen.state !== "playing") { state = seen.state; break; }
      const board = seen.pits && { game: seen.game, ply: seen.ply, pits: seen.pits, clocks: seen.clocks };
      if (board && board.ply > 0 && boards.length === 0) {
        boards.push(board);
        // Enter on the focused card (a link) opens the set's live view.
        await evaluate(`document.querySelector('.live-set[data-set=${JSON.stringify(set)}]').focus()`);
        for (const type of ["keyDown", "keyUp"]) {
          await send("Input.dispatchKeyEvent", { type, key: "Enter", code: "Enter", windowsVirtualKeyCode: 13, text: type === "keyDown" ? "\r" : undefined });
        }
      } else if (board && boards.length === 1 && JSON.stringify(board.pits) !== JSON.stringify(boards[0].pits)) {
        boards.push(board);
      }
      if (boards.length > 0 && !focus) focus = await liveView();
      // The set's live view opened directly, in a tab of its own, while it runs.
      if (seen.state === "playing" && !direct && seen.ply > 0) direct = await openDirect(seen.set);
    }
    await sleep(25);
  }
  // The live view stays after the set ends (with its card, for 30 s).
  for (let i = 0; i < 200 && boards.length > 0 && !focus; i++) {
    await sleep(50);
    focus = await liveView();
  }
  // The live view's result line once the set is over, and the page's title.
  for (let i = 0; i < 200 && focus && !(await evaluate(`/finished/.test((document.querySelector('#live-focus .live-result') || {}).textContent || '')`)); i++) {
    await sleep(50);
  }
  const ended = await evaluate(`(() => {
    const f = document.getElementById('live-focus');
    const r = f && f.querySelector('.live-result');
    const s = f && f.querySelector('.live-score');
    return f && { result: r ? r.textContent : null, score: s ? s.dataset.points : null, title: document.title };
  })()`);
  const page = await evaluate(`({ pwned: window.pwned === undefined ? null : window.pwned,
    bold: document.querySelectorAll('#live b, #view b').length,
    replayLink: (document.querySelector('.live-set[data-set="${set}"].replay') || {}).href || null })`);
  if (!set || !page.replayLink) finish(1, { error: "no finished live set", set, plies, state });

  // The set's page on the dashboard: the seed it shows (a string: a JavaScript number
  // would keep 53 of its 64 bits).
  await evaluate(`location.hash = ${JSON.stringify("#/set/" + set)}`);
  let dashboardSeed = null;
  for (let i = 0; i < 200 && dashboardSeed === null; i++) {
    await sleep(50);
    dashboardSeed = await evaluate(`(() => {
      const h = document.querySelector('#view h2');
      if (!h || h.textContent !== ${JSON.stringify(set)}) return null;
      const m = /\u00b7 seed ([^ ]+) \u00b7/.exec(document.getElementById('view').textContent);
      return m ? m[1] : null;
    })()`);
  }

  await send("Page.navigate", { url: page.replayLink });
  let replay = null;
  for (let i = 0; i < 200 && !replay; i++) {
    await sleep(50);
    replay = await evaluate(`(() => {
      const data = document.getElementById('hus-data');
      if (!data || !document.getElementById('board') || !document.getElementById('board').childElementCount) return null;
      const d = JSON.parse(data.textContent);
      const seed = /\u00b7 seed ([^ ]+) \u00b7/.exec(document.getElementById('set-line').textContent);
      return { status: d.status, moves: d.games.reduce((n, g) => n + g.pits.length, 0),
               seed: seed ? seed[1] : null,
               check_error_hidden: document.getElementById('check-error').hidden,
               pwned: window.pwned === undefined ? null : window.pwned };
    })()`);
  }
  finish(0, { set, state, plies_seen: plies, announced, bots, live_href: liveHref, boards, focus, direct, ended,
    replay_link: page.replayLink, pwned: page.pwned, bold_elements: page.bold, dashboard_seed: dashboardSeed, replay });
}

main().catch((e) => finish(1, { error: String(e.stack || e) }));
