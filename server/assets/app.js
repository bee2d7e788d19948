// The dashboard of `hus serve`: keeps the server's pages live (what changed comes on the
// live stream and is put in place; the page's <main> fetched again at most once a
// minute while results arrive) and draws the live games from the JSON API (docs/api.md).
// Every text this script makes goes in through textContent: names and details that
// bots supply are never parsed as HTML here (the pages it fetches were escaped by the
// server).
"use strict";

function el(tag, attrs, ...children) {
  const node = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (k === "class") node.className = v;
    else if (k === "href") node.setAttribute("href", v);
    else node.setAttribute(k, String(v));
  }
  for (const c of children) {
    if (c === null || c === undefined) continue;
    node.append(typeof c === "string" || typeof c === "number" ? document.createTextNode(String(c)) : c);
  }
  return node;
}

// Puts `children` in `node` in place of its own, leaving out the absent ones (a
// `null` given to replaceChildren would be the text "null").
function fill(node, ...children) {
  node.replaceChildren(...children.filter((c) => c !== null && c !== undefined));
}

async function api(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  if (!r.ok) throw new Error(path + ": HTTP " + r.status);
  return r.json();
}

function fmt(x, digits) {
  return x === null || x === undefined ? "–" : Number(x).toFixed(digits);
}

function botLink(name) {
  return el("a", { href: "/bots/" + encodeURIComponent(name), class: "bot" }, name);
}

// The pages (standings, a bot, a set) are rendered by the server, complete without
// this script (src/html.rs): the script fetches the page of the address again as
// results arrive and puts its <main> in place. The older hash links (#/bot/NAME,
// #/set/SET) open the same pages; #/live/SET is the live view of a running set.
function hashRoute() {
  const hash = location.hash.replace(/^#\/?/, "");
  const [kind, ...rest] = hash.split("/");
  return { kind, arg: rest.join("/") }; // arg still percent-encoded
}

function pagePath() {
  const { kind, arg } = hashRoute();
  if (kind === "bot" && arg) return "/bots/" + arg;
  if (kind === "set" && arg) return "/sets/" + arg;
  return location.pathname + location.search;
}

async function route() {
  const view = document.getElementById("view");
  const { kind, arg } = hashRoute();
  if (kind === "live" && arg) {
    showLive(view, decodeURIComponent(arg));
    return;
  }
  markLiveView();
  const path = pagePath();
  try {
    const r = await fetch(path, { headers: { Accept: "text/html" } });
    // Parsed, not run: the server escaped every text, and a parsed document runs no script.
    const doc = new DOMParser().parseFromString(await r.text(), "text/html");
    const main = doc.getElementById("view");
    if (!main) throw new Error(path + ": HTTP " + r.status);
    if (pagePath() !== path) return; // the address changed meanwhile
    view.replaceChildren(...Array.from(main.childNodes, (n) => document.importNode(n, true)));
    if (doc.title) document.title = doc.title;
  } catch (e) {
    view.replaceChildren(el("p", { class: "problem" }, String(e.message || e)));
  }
}

// What a result changes comes on the live stream and is applied in place (below: the
// new set's row, the standings rows, the status line). What follows from the rating
// fit (the cross-table, the charts, a bot's figures) is caught up by fetching the page
// again, at most once every PAGE_EVERY_MS while results arrive (the last time after the
// last result); not on the live view of a set, which is not a page of the server.
const PAGE_EVERY_MS = 60000;
let pageTimer = null;
let pageAt = Date.now(); // the page as served is fresh

function refreshPage() {
  if (pageTimer || hashRoute().kind === "live") return;
  const wait = Math.max(0, pageAt + PAGE_EVERY_MS - Date.now());
  pageTimer = setTimeout(() => {
    pageTimer = null;
    pageAt = Date.now();
    if (hashRoute().kind !== "live") route();
  }, wait);
}

// ---- live games ------------------------------------------------------------------
// The sets this server plays are cards at the top of every view (the first
// BOARDS_SHOWN to have started: the server chooses them): one link to the set's live
// view (#/live/SET) holding the bots (the league's names; the names they announced, as
// text), the game and ply, the board drawn by HusBoard (board.js, the replay viewer's
// own board code, served at /board.js) with the last move marked, and each bot's last
// move time (and its clock, with a clock time control). The dashboard's stream sends
// each card's whole state (`card`) a few times a second at most, the latest replacing
// one not sent; the live view's stream (?set=SET) every record of its set. The sets the
// `hus worker`s play (`elsewhere` in /api/live) are cards without a board: their moves
// are played on the workers' machines and not streamed.

// The running sets' cards come first (#live); below them, in one row (#live-done),
// the sets that finished last, newest first: at most FINISHED_SHOWN of them, each for
// at most FINISHED_FOR_MS, as compact cards without a board. However fast the league
// finishes sets, the strip holds the running sets and one row.
const FINISHED_SHOWN = 4;
const FINISHED_FOR_MS = 30000;
const BOARDS_SHOWN = 8; // the server's live::BOARDS_SHOWN

const live = new Map(); // set -> entry (liveCard), the sets being played
const done = new Map(); // set -> entry, the finished sets in view, oldest first
const elsewhere = new Map(); // set -> { node, bots, worker, forS, at }
let liveRead = false; // /api/live was read once
let elsewhereTimers = null;

function liveHref(set) {
  return "#/live/" + encodeURIComponent(set);
}

function replayHref(set) {
  return "/sets/" + encodeURIComponent(set) + "/replay";
}

function showLiveEmpty() {
  document.getElementById("live-empty").hidden = live.size + elsewhere.size > 0;
}

function liveCard(set, bots) {
  let entry = live.get(set);
  if (entry) return entry;
  // The whole card is one link (a click or Enter opens the live view): nothing in it
  // is a link of its own.
  const node = el("a", { class: "live-set", href: liveHref(set), "data-set": set, "data-state": "playing" });
  entry = {
    node, bots, announced: [null, null], game: 0, ply: 0, board: null, move: null, over: false,
    botOf: [0, 1], // the bot (0 = A, 1 = B) of each engine player in this game
    ms: [null, null], moves: [], result: "", state: "playing", drawn: null, since: Date.now(),
    time: null, // the header's time control
    planned: 0, // the games the set plays (the header's)
    points: [0, 0], // A's and B's points in the games finished so far
    clocks: null, // with a clock: each bot's milliseconds left, after its last move
  };
  live.set(set, entry);
  const box = document.getElementById("live");
  box.insertBefore(node, box.querySelector(".elsewhere"));
  forgetDone(set);
  elsewhere.delete(set);
  showLiveEmpty();
  return entry;
}

// The SVG board of `holder` (a card, or the live view), made by HusBoard once and
// again only when the width or the sowing direction changes; shows the entry's board.
function drawLive(e, holder, labels) {
  if (!e.board) return el("p", { class: "muted" }, "waiting for the bots");
  const b = e.board;
  const clockwise = b.sowing !== "anticlockwise";
  let d = holder.drawn;
  if (!d || d.width !== b.width || d.clockwise !== clockwise) {
    const svg = document.createElementNS("http://www.w3.org/2000/svg", "svg");
    svg.setAttribute("class", labels ? "live-board large" : "live-board");
    svg.setAttribute("role", "img");
    const handle = HusBoard.create(svg, b.width, clockwise, null, { ids: false, labels });
    d = holder.drawn = { width: b.width, clockwise, svg, handle };
  }
  d.handle.show(b.pits, e.over ? null : b.to_move, (p) => e.bots[e.botOf[p]], e.move);
  d.svg.setAttribute("aria-label", "the board after " + e.ply + (e.ply === 1 ? " ply" : " plies") + " of game " + e.game);
  return d.svg;
}

function moveTime(ms) {
  return ms === null || ms === undefined ? "–" : fmt(ms, ms < 10 ? 2 : 0) + " ms";
}

// Each bot's last move time.
function moveTimes(e) {
  return el("p", { class: "live-times" }, "last move: ",
    el("span", { class: "live-ms", "data-bot": 0 }, e.bots[0] + " " + moveTime(e.ms[0])), " · ",
    el("span", { class: "live-ms", "data-bot": 1 }, e.bots[1] + " " + moveTime(e.ms[1])));
}

// With a clock, what each bot has left after its last move: the server counts them as
// the referee does (PROTOCOL.md, "Timing": the header's time control, each move's `ms`
// less its lag allowance `lag_ms` and the referee's stall `stall_ms`, plus the
// increment) and sends them with each card and each record (`clocks`).
function clockTime(ms) {
  const s = ms / 1000;
  return s < 60 ? s.toFixed(1) + " s" : Math.floor(s / 60) + ":" + String(Math.floor(s % 60)).padStart(2, "0");
}

function clocksLine(e) {
  if (!e.clocks) return null;
  return el("p", { class: "live-clocks" }, "clocks: ",
    el("span", { class: "live-clock", "data-bot": 0, "data-ms": e.clocks[0] }, e.bots[0] + " " + clockTime(e.clocks[0])), " · ",
    el("span", { class: "live-clock", "data-bot": 1, "data-ms": e.clocks[1] }, e.bots[1] + " " + clockTime(e.clocks[1])));
}

// The time control in words.
function timeControl(t) {
  if (!t) return null;
  if (t.mode === "clock") return "clock " + clockTime(t.base_ms) + " + " + clockTime(t.increment_ms) + " a move";
  if (t.mode === "per-move") return clockTime(t.move_ms) + " a move";
  return null;
}

// `game N of M` (of M once the header said it).
function gameOf(e) {
  return [el("span", { class: "live-game" }, e.game), e.planned ? " of " + e.planned : ""];
}

// The set's score so far, A's points first: `alpha 3–1 greedy`.
function scoreLine(e) {
  return el("span", { class: "live-score", "data-points": e.points[0] + "-" + e.points[1] },
    e.bots[0] + " " + e.points[0] + "–" + e.points[1] + " " + e.bots[1]);
}

// How a set ended, in words, with its score: `finished: alpha 3–1 greedy, alpha wins`.
function setResult(e, how) {
  const [a, b] = e.points;
  const who = a > b ? e.bots[0] + " wins" : b > a ? e.bots[1] + " wins" : "drawn";
  return "set " + how + ": " + e.bots[0] + " " + a + "–" + b + " " + e.bots[1] + (how === "finished" ? ", " + who : "");
}

// A bot's league name (a link when `links`) and, if it announced another, that name.
function liveBot(e, i, links) {
  const a = e.announced[i];
  return el("span", { class: "live-bot" }, links ? botLink(e.bots[i]) : e.bots[i],
    a && a !== e.bots[i] ? el("span", { class: "announced muted" }, " (announced as " + a + ")") : null);
}

function renderCard(set) {
  const e = live.get(set) || done.get(set);
  if (!e) return;
  if (e.state !== "playing") {
    // Finished, stopped or failed: a compact card, its result and no board.
    fill(e.node,
      el("h3", {}, liveBot(e, 0, false), " vs ", liveBot(e, 1, false)),
      el("p", {}, el("span", { class: "live-name muted" }, set), " · ", el("span", { class: "live-result" }, e.result)));
  } else {
    fill(e.node,
      el("h3", {}, liveBot(e, 0, false), " vs ", liveBot(e, 1, false)),
      el("p", {}, el("span", { class: "live-name muted" }, set), " · game ", ...gameOf(e),
        ", ply ", el("span", { class: "live-ply" }, e.ply), e.result ? " · " : "", el("span", { class: "live-result" }, e.result)),
      el("p", {}, scoreLine(e)),
      drawLive(e, e, false),
      moveTimes(e),
      clocksLine(e));
  }
  renderFocus(set);
}

// A set leaves the running cards for the first place of the finished row; the oldest
// beyond FINISHED_SHOWN leave the row.
function toDone(set, e) {
  live.delete(set);
  done.delete(set);
  done.set(set, e);
  e.node.classList.add("done");
  const row = document.getElementById("live-done");
  if (row) row.prepend(e.node);
  else e.node.remove();
  while (done.size > FINISHED_SHOWN) forgetDone(done.keys().next().value);
  setTimeout(() => { if (done.get(set) === e) forgetDone(set); }, FINISHED_FOR_MS);
  showLiveEmpty();
}

function forgetDone(set) {
  const e = done.get(set);
  if (!e) return;
  e.node.remove();
  done.delete(set);
  renderFocus(set);
}

// The live view of one set (#/live/SET): its board, large, with the game's moves and
// their times, updated as the card is; the replay once the set is over.
// `entry`: the set it shows, kept there after its card is gone (the result stays).
// `unknown`: the stream said the server does not know the set.
const focusBoard = { drawn: null, set: null, entry: null, unknown: false };

// On the live view the other cards are hidden (body.live-view): the set is the page.
function markLiveView() {
  document.body.classList.toggle("live-view", /^#\/live\/./.test(location.hash));
}
window.addEventListener("hashchange", markLiveView);

function showLive(view, set) {
  markLiveView();
  focusBoard.drawn = null;
  if (focusBoard.set !== set) Object.assign(focusBoard, { set, entry: null, unknown: false });
  view.replaceChildren(el("section", { id: "live-focus", "data-set": set }));
  renderFocus(set);
}

function renderFocus(set) {
  const node = document.getElementById("live-focus");
  if (!node || node.dataset.set !== set) return;
  const e = live.get(set) || done.get(set) || (focusBoard.set === set ? focusBoard.entry : null);
  if (e) focusBoard.entry = e;
  if (!e) {
    fill(node, el("h2", {}, set),
      el("p", {}, focusBoard.unknown ? "This server is not playing this set now: " : "connecting…",
        el("a", { href: "/sets/" + encodeURIComponent(set) }, "its page"), " · ",
        el("a", { href: replayHref(set), class: "replay" }, "its replay")));
    return;
  }
  const names = (b) => e.bots[b];
  const shown = e.moves.slice(-60);
  document.title = (e.state === "playing" ? "live: " : e.state + ": ") + e.bots[0] + " vs " + e.bots[1] + " (" + set + ") · hus serve";
  const time = timeControl(e.time);
  fill(node,
    el("h2", {}, set, el("span", { class: "muted" }, " · " + (e.state === "playing" ? "live" : e.state))),
    el("p", {}, liveBot(e, 0, true), " vs ", liveBot(e, 1, true), " · game ", ...gameOf(e),
      ", ply ", el("span", { class: "live-ply" }, e.ply), e.result ? " · " : "", el("span", { class: "live-result" }, e.result),
      " · ", el("a", { href: replayHref(set), class: "replay" }, e.state === "finished" ? "replay" : "replay so far"),
      " · ", el("a", { href: "#/" }, "all live games")),
    el("p", {}, "score: ", scoreLine(e), time ? " · " : "", time ? el("span", { class: "live-time" }, time) : null),
    drawLive(e, focusBoard, true),
    moveTimes(e),
    clocksLine(e),
    el("h3", {}, "Moves of game " + e.game + (shown.length < e.moves.length ? " (the last " + shown.length + ")" : "")),
    el("ul", { class: "live-moves" }, ...shown.map((m) =>
      el("li", {}, "ply " + (m.ply + 1) + ": " + names(m.bot) + " plays pit " + m.pit + " (" + moveTime(m.ms) + ")"))));
}

// The workers' sets: cards without a board, `played by worker W for N s`.
function showElsewhere(list) {
  const now = Date.now();
  const seen = new Set();
  for (const s of list) {
    if (live.has(s.set)) continue;
    seen.add(s.set);
    let w = elsewhere.get(s.set);
    if (!w) {
      w = { node: el("div", { class: "live-set elsewhere", "data-set": s.set }) };
      elsewhere.set(s.set, w);
      document.getElementById("live").append(w.node);
    }
    Object.assign(w, { bots: s.bots, worker: s.worker, forS: s.for_s, at: now });
    renderElsewhere(s.set);
  }
  for (const [set, w] of elsewhere) {
    if (!seen.has(set)) { w.node.remove(); elsewhere.delete(set); }
  }
  showLiveEmpty();
}

function renderElsewhere(set) {
  const w = elsewhere.get(set);
  if (!w) return;
  const secs = Math.round(w.forS + (Date.now() - w.at) / 1000);
  w.node.setAttribute("data-worker", w.worker);
  fill(w.node,
    el("h3", {}, el("span", { class: "live-bot" }, w.bots[0]), " vs ", el("span", { class: "live-bot" }, w.bots[1])),
    el("p", {}, el("span", { class: "live-name muted" }, set)),
    el("p", { class: "live-worker" }, "played by worker ", el("span", { class: "worker" }, w.worker), " for " + secs + " s"));
}

// ---- what changed on the pages ----------------------------------------------------
// The server sends the rows it renders (escaped by it); they are parsed, not run, as a
// fetched page is, and put in place.
function parseRows(html) {
  const doc = new DOMParser().parseFromString("<table><tbody>" + html + "</tbody></table>", "text/html");
  return Array.from(doc.querySelectorAll("tbody > tr"), (tr) => document.importNode(tr, true));
}

// Whether a list of sets (its data-feed) takes in the set of a `result` event.
function feedTakes(table, ev) {
  const d = table.dataset;
  const has = (name) => Array.isArray(ev.bots) && ev.bots.includes(name);
  if (d.feed === "all") return true;
  if (d.feed === "bot") return has(d.a);
  if (d.feed === "pair") return has(d.a) && has(d.b);
  if (d.feed === "faulted") return Array.isArray(ev.faulted) && ev.faulted.includes(d.a);
  return false;
}

// A set finished: its row goes first in each list of the page that takes it in, and
// the list keeps its length.
function applyResult(ev) {
  const [row] = parseRows(ev.row || "");
  if (!row) return;
  for (const table of document.querySelectorAll("#view table.sets[data-feed]")) {
    if (!feedTakes(table, ev)) continue;
    const body = table.tBodies[0];
    if (!body || Array.from(body.rows).some((r) => r.dataset.set === ev.set)) continue;
    body.prepend(row.cloneNode(true));
    const max = Number(table.dataset.max) || 1;
    while (body.rows.length > max) body.rows[body.rows.length - 1].remove();
  }
}

// The standings rows that changed, in place, then every row in the table's order.
function applyStandings(ev) {
  const body = document.querySelector("#view table.standings tbody");
  if (!body) return;
  const byBot = new Map(Array.from(body.rows, (r) => [r.dataset.bot, r]));
  for (const { bot, row } of ev.rows || []) {
    const [fresh] = parseRows(row);
    if (!fresh) continue;
    const old = byBot.get(bot);
    if (old) old.replaceWith(fresh);
    else body.append(fresh);
    byBot.set(bot, fresh);
  }
  for (const bot of ev.order || []) {
    const r = byBot.get(bot);
    if (r) body.append(r);
  }
}

function onEvent(ev) {
  if (ev.type === "status") {
    document.getElementById("status").textContent = ev.line;
    return;
  }
  if (ev.type === "standings") {
    applyStandings(ev);
    return;
  }
  if (ev.type === "result") {
    applyResult(ev);
    refreshPage();
    return;
  }
  const set = ev.set;
  if (ev.type === "live-set") {
    fromSnapshot(ev);
    return;
  }
  if (ev.type === "unknown-set") {
    if (focusBoard.set === set) focusBoard.unknown = true;
    renderFocus(set);
    return;
  }
  if (ev.type === "card") {
    applyCard(ev);
  } else if (ev.type === "set-over") {
    let e = live.get(set);
    // A set that ended before this tab saw it run: a finished card all the same.
    if (!e && !done.has(set) && Array.isArray(ev.bots)) e = liveCard(set, ev.bots);
    if (e && e.state === "playing") {
      if (Array.isArray(ev.points)) e.points = ev.points.slice();
      e.state = ev.how;
      e.over = true;
      e.node.setAttribute("data-state", ev.how);
      e.result = setResult(e, ev.how);
      // A finished set stays in view a little; its card then opens its replay.
      if (ev.how === "finished") {
        e.node.setAttribute("href", replayHref(set));
        e.node.classList.add("replay");
      }
      toDone(set, e);
      renderCard(set);
    }
    return;
  } else {
    // A record of the set the live view follows.
    const e = live.get(set);
    if (!e) return;
    if (ev.type === "header") { e.time = ev.time; e.planned = ev.games || 0; }
    if (ev.type === "ready" && ev.bot < 2) e.announced[ev.bot] = ev.name;
    if (ev.type === "game-start") {
      Object.assign(e, { game: ev.game, ply: 0, moves: [], move: null, over: false, result: "" });
      e.node.removeAttribute("data-game-over");
      // The bot that moves first is the player to move in the starting position.
      if (ev.board && (ev.first === 0 || ev.first === 1)) {
        e.botOf[ev.board.to_move] = ev.first;
        e.botOf[1 - ev.board.to_move] = 1 - ev.first;
      }
    }
    if (ev.type === "move") {
      e.ply = ev.ply + 1;
      e.move = ev;
      if (ev.bot === 0 || ev.bot === 1) {
        e.botOf[ev.player] = ev.bot;
        e.ms[ev.bot] = ev.ms;
      }
      e.moves.push({ ply: ev.ply, bot: ev.bot, pit: ev.pit, ms: ev.ms });
      if (e.moves.length > 1000) e.moves.shift();
    }
    if (ev.type === "game-end") {
      if (Array.isArray(ev.points)) e.points = [e.points[0] + ev.points[0], e.points[1] + ev.points[1]];
      e.over = true;
      e.result = "game over: " + ev.reason;
      e.node.setAttribute("data-game-over", ev.game);
    }
    // With a clock, each record says what each bot has left after it (the server
    // counts them as the referee does).
    if (ev.type === "game-start" || ev.clocks) e.clocks = ev.clocks || null;
    if (ev.board) e.board = ev.board;
  }
  renderCard(set);
}

// A set's card as the dashboard's stream sends it: its whole state, in place of the
// one shown.
function applyCard(ev) {
  const e = liveCard(ev.set, ev.bots);
  const over = ev.over !== null && ev.over !== undefined;
  Object.assign(e, {
    announced: ev.announced || [null, null], game: ev.game, planned: ev.games_planned || 0,
    points: (ev.points || [0, 0]).slice(), time: ev.time, ply: ev.ply, board: ev.board, move: ev.move,
    ms: ev.ms || [null, null], clocks: ev.clocks || null, botOf: ev.bot_of || [0, 1], over,
    result: over ? "game over: " + ev.over : "",
  });
  if (over) e.node.setAttribute("data-game-over", ev.game);
  else e.node.removeAttribute("data-game-over");
}

// A running set from /api/live: its card, with the current game's events.
function fromSnapshot(s) {
  const e = liveCard(s.set, s.bots);
  e.announced = s.announced;
  e.time = s.time;
  e.planned = s.games_planned || 0;
  for (const ev of s.events) onEvent(ev);
  // The snapshot's score counts every game that ended, the current one's events' too.
  e.points = (s.points || [0, 0]).slice();
  e.game = s.game;
  renderCard(s.set);
  return e;
}

// The workers' sets are not streamed: /api/live is read again every 10 s for them, and
// their cards count their seconds in between. The same read drops the card of a set
// that ended unseen (the stream was down a while), once it is 10 s old, and while the
// stream is not open (refused: too many tabs) draws the first running sets from it.
async function refreshLive() {
  let snap;
  try { snap = await api("/api/live"); } catch (e) { return; }
  showElsewhere(snap.elsewhere || []);
  if (sourceUrl === DASHBOARD_STREAM && source.readyState !== EventSource.OPEN) {
    for (const s of snap.sets.slice(0, BOARDS_SHOWN)) if (!live.has(s.set)) fromSnapshot(s);
  }
  const running = new Set(snap.sets.map((s) => s.set));
  for (const [set, e] of live) {
    if (e.state === "playing" && !running.has(set) && Date.now() - e.since > 10000) {
      e.node.remove();
      live.delete(set);
      renderFocus(set);
    }
  }
  showLiveEmpty();
}

// One live stream a tab: on the live view of a set that set's own (?set=SET: the set
// so far, then every record; it ends with the set), elsewhere the dashboard's (the
// cards the strip shows and the pages' events). Switched as the address changes.
let source = null;
let sourceUrl = null;
const DASHBOARD_STREAM = "/api/live/events";

function streamUrl() {
  const { kind, arg } = hashRoute();
  if (kind !== "live" || !arg) return DASHBOARD_STREAM;
  return DASHBOARD_STREAM + "?set=" + encodeURIComponent(decodeURIComponent(arg));
}

function connect() {
  const url = streamUrl();
  if (source && sourceUrl === url) return;
  if (source) source.close();
  sourceUrl = url;
  const s = (source = new EventSource(url));
  s.onmessage = (m) => {
    let ev;
    try { ev = JSON.parse(m.data); } catch (e) { return; /* not ours */ }
    onEvent(ev);
    // A set's stream ends with its set: not to be opened again by the browser.
    if (url !== DASHBOARD_STREAM && (ev.type === "set-over" || ev.type === "unknown-set")) s.close();
  };
  // The set's stream lost events (this tab fell far behind): from the set so far again.
  s.addEventListener("lagged", () => { if (source === s) { s.close(); source = null; connect(); } });
  s.onopen = () => {
    refreshStatus();
    // The dashboard's stream starts with the card of every set it shows: the cards of
    // sets that ended meanwhile (another stream was open, or none) go.
    if (url === DASHBOARD_STREAM) {
      for (const [set, e] of live) {
        if (e.state === "playing") { e.node.remove(); live.delete(set); }
      }
      showLiveEmpty();
    }
  };
}

async function startLive() {
  connect();
  try {
    const snap = await api("/api/live");
    showElsewhere(snap.elsewhere || []);
  } catch (e) { /* the stream still brings the sets */ }
  liveRead = true;
  if (!elsewhereTimers) {
    elsewhereTimers = [
      setInterval(refreshLive, 10000),
      setInterval(() => { for (const set of elsewhere.keys()) renderElsewhere(set); }, 1000),
    ];
  }
}

async function refreshStatus() {
  try {
    const s = await api("/api/status");
    document.getElementById("status").textContent =
      (s.low_space ? "paused: " + s.low_space + " · " : s.paused ? "paused · " : "") + s.sets_running + " running, " + s.sets_done + " sets played, " + s.watchers + " watching";
  } catch (e) {
    document.getElementById("status").textContent = "the server does not answer";
  }
}

window.addEventListener("hashchange", route);
window.addEventListener("hashchange", connect);
document.addEventListener("DOMContentLoaded", () => {
  route();
  startLive();
  refreshStatus();
  // The status line comes on the stream as it changes; read again now and then for
  // the count of watchers, which changes without a snapshot.
  setInterval(refreshStatus, 60000);
});
