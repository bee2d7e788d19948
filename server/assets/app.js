// The dashboard of `hus serve`: standings, bots, sets and live games from the JSON API
// (docs/api.md). Every text goes in through textContent: names and details that bots
// supply are never parsed as HTML.
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

async function api(path) {
  const r = await fetch(path, { headers: { Accept: "application/json" } });
  if (!r.ok) throw new Error(path + ": HTTP " + r.status);
  return r.json();
}

function fmt(x, digits) {
  return x === null || x === undefined ? "–" : Number(x).toFixed(digits);
}

function rating(r) {
  if (!r) return "–";
  return fmt(r.value, 0) + " (" + fmt(r.low, 0) + " to " + fmt(r.high, 0) + ")";
}

function wdl(rec) {
  return rec.won + "-" + rec.drawn + "-" + rec.lost;
}

function botLink(name) {
  return el("a", { href: "#/bot/" + encodeURIComponent(name), class: "bot" }, name);
}

function setLink(name) {
  return el("a", { href: "#/set/" + encodeURIComponent(name) }, name);
}

function table(headers, rows) {
  const head = el("tr", {}, ...headers.map((h) => el("th", { class: h.num ? "num" : "" }, h.text || h)));
  return el("table", {}, el("thead", {}, head), el("tbody", {}, ...rows));
}

function num(x) {
  return el("td", { class: "num" }, x);
}

// A set's games in a cell: each game for a short set, a count per bot for a long one
// (a set of 150 games stays one line; its page and replay have every game).
const GAMES_LISTED = 3;
function gamesCell(s) {
  if (s.games.length <= GAMES_LISTED) {
    return s.games.map((g) => (g.winner === null ? "draw" : g.winner) + " by " + g.reason).join("; ");
  }
  const won = (name) => s.games.filter((g) => g.winner === name).length;
  const drawn = s.games.filter((g) => g.winner === null).length;
  return s.games.length + " games: " + s.bots[0] + " won " + won(s.bots[0]) + ", " + s.bots[1] + " won " +
    won(s.bots[1]) + ", " + drawn + " drawn";
}

function setRows(sets) {
  return sets.map((s) =>
    el("tr", { "data-set": s.set },
      el("td", {}, setLink(s.set)),
      el("td", {}, botLink(s.bots[0]), " vs ", botLink(s.bots[1])),
      num(s.points[0] + "–" + s.points[1]),
      el("td", {}, s.winner === null ? "drawn" : s.winner),
      el("td", {}, gamesCell(s)),
      el("td", {},
        el("a", { href: "/sets/" + encodeURIComponent(s.set) + "/replay", class: "replay" }, "replay"), " ",
        el("a", { href: "/api/sets/" + encodeURIComponent(s.set) + "/log" }, "log"))));
}

const setHeaders = ["set", "bots", { text: "points", num: true }, "winner", "games", ""];

async function showHome(view) {
  const [st, sets, status, workers] = await Promise.all([api("/api/standings"), api("/api/sets?limit=20"), api("/api/status"), api("/api/workers")]);
  const rows = st.bots.map((b) =>
    el("tr", { "data-bot": b.name },
      num(b.rank), el("td", {}, botLink(b.name), b.active ? "" : " (removed)"),
      el("td", { class: "num rating" }, rating(b.rating)),
      num(wdl(b.games)), num(wdl(b.sets)), num(b.points), num(b.faults.total), num(fmt(b.mean_move_ms, 1))));
  const parts = [
    el("h2", {}, "Standings"),
    table(["#", "bot", { text: "rating (95%)", num: true }, { text: "games W-D-L", num: true }, { text: "sets W-D-L", num: true },
      { text: "points", num: true }, { text: "faults", num: true }, { text: "ms/move", num: true }], rows),
    el("p", { class: "muted" }, st.games_played + " games in " + sets.total + " sets; first mover " + wdl(st.first_mover)),
    el("h2", {}, "Recent sets"),
    table(setHeaders, setRows(sets.sets)),
  ];
  // Workers of a PostgreSQL store (hus worker), as `hus workers` lists them.
  if (workers.workers.length > 0) {
    parts.push(el("h2", {}, "Workers"), table(
      ["worker", "host", { text: "last heartbeat", num: true }, { text: "in flight", num: true },
        { text: "sets/hour", num: true }, { text: "finished", num: true }, { text: "duplicates", num: true }, "problem"],
      workers.workers.map((w) =>
        el("tr", { "data-worker": w.name },
          el("td", {}, w.name), el("td", {}, w.host),
          num(w.stopped ? "stopped " + fmt(w.last_heartbeat_s, 0) + " s ago" : fmt(w.last_heartbeat_s, 1) + " s ago"),
          num(w.in_flight), num(w.sets_last_hour), num(w.sets_finished), num(w.duplicates),
          el("td", { class: w.problem ? "problem" : "" },
            w.problem ? w.problem + "; leaves " + w.leaves.join(" and ") + "'s sets to the others" : "")))));
  }
  // Every live worker gave up every pending set: said above the problems.
  if (workers.stuck) parts.push(el("p", { class: "problem", "data-stuck": "" }, workers.stuck));
  for (const p of status.problems) parts.push(el("p", { class: "problem" }, p.at + " " + p.set + ": " + p.error));
  view.replaceChildren(...parts);
}

async function showBot(view, name) {
  const data = await api("/api/bots/" + encodeURIComponent(name) + "?limit=100");
  const b = data.bot;
  const faults = Object.entries(b.faults.by_kind).map(([k, n]) => el("tr", {}, el("td", {}, k), num(n)));
  view.replaceChildren(
    el("h2", {}, b.name),
    el("p", {}, "command: ", el("code", {}, b.command), b.active ? "" : " (removed)"),
    el("p", {}, "rating " + rating(b.rating) + "; games " + wdl(b.games) + "; sets " + wdl(b.sets) +
      "; " + b.moves + " moves, mean " + fmt(b.mean_move_ms, 2) + " ms per move"),
    el("h3", {}, "Faults by kind (" + b.faults.total + ")"),
    faults.length ? table(["kind", { text: "count", num: true }], faults) : el("p", {}, "none"),
    el("h3", {}, "Sets"),
    table(setHeaders, setRows(data.sets)));
}

async function showSet(view, name) {
  const s = await api("/api/sets/" + encodeURIComponent(name));
  view.replaceChildren(
    el("h2", {}, s.set),
    // seed_str, not seed: a JavaScript number keeps 53 of the seed's 64 bits.
    el("p", {}, botLink(s.bots[0]), " " + s.points[0] + "–" + s.points[1] + " ", botLink(s.bots[1]),
      " · seed " + s.seed_str + " · ", el("a", { href: "/sets/" + encodeURIComponent(s.set) + "/replay", class: "replay" }, "replay"),
      " · ", el("a", { href: "/api/sets/" + encodeURIComponent(s.set) + "/log" }, "log")),
    table(["game", "first", "winner", { text: "points", num: true }, "reason", { text: "plies", num: true }],
      s.games.map((g) => el("tr", {}, num(g.game), el("td", {}, g.first), el("td", {}, g.winner === null ? "draw" : g.winner),
        num(g.points[0] + "–" + g.points[1]), el("td", {}, g.reason + (g.double ? " (double)" : "")), num(g.plies)))),
    el("h3", {}, "Faults"),
    s.faults.length
      ? table(["game", "ply", "bot", "kind", "detail"], s.faults.map((f) =>
        el("tr", {}, num(f.game), num(f.ply), el("td", {}, f.bot), el("td", {}, f.kind), el("td", {}, f.detail))))
      : el("p", {}, "none"));
}

async function route() {
  const view = document.getElementById("view");
  const hash = location.hash.replace(/^#\/?/, "");
  const [kind, ...rest] = hash.split("/");
  const arg = decodeURIComponent(rest.join("/"));
  try {
    if (kind === "bot" && arg) await showBot(view, arg);
    else if (kind === "set" && arg) await showSet(view, arg);
    else await showHome(view);
  } catch (e) {
    view.replaceChildren(el("p", { class: "problem" }, String(e.message || e)));
  }
}

// ---- live games ------------------------------------------------------------------

const live = new Map(); // set -> { node, state }

function drawBoard(board, played) {
  // Each player's pits in sowing order: front row 0..w-1, back row w..2w-1. Player 1
  // is drawn on top (back row outermost), player 0 below, front rows facing.
  const w = board.width;
  const rows = [];
  const p1 = board.pits[1], p0 = board.pits[0];
  const cell = (player, i, n) => el("td", { "data-player": player, "data-pit": i, class: played && played[0] === player && played[1] === i ? "played" : "" }, n);
  rows.push(el("tr", { class: "p1" }, ...Array.from({ length: w }, (_, c) => cell(1, w + c, p1[w + c]))));
  rows.push(el("tr", { class: "p1" }, ...Array.from({ length: w }, (_, c) => cell(1, w - 1 - c, p1[w - 1 - c]))));
  rows.push(el("tr", { class: "gap" }, el("td", { colspan: w })));
  rows.push(el("tr", { class: "p0" }, ...Array.from({ length: w }, (_, c) => cell(0, c, p0[c]))));
  rows.push(el("tr", { class: "p0" }, ...Array.from({ length: w }, (_, c) => cell(0, 2 * w - 1 - c, p0[2 * w - 1 - c]))));
  return el("table", { class: "board" }, el("tbody", {}, ...rows));
}

function liveCard(set, bots) {
  let entry = live.get(set);
  if (entry) return entry;
  const node = el("div", { class: "live-set", "data-set": set, "data-state": "playing" });
  entry = { node, bots, announced: [null, null], game: 0, ply: 0, board: null, played: null, moves: [], result: "" };
  live.set(set, entry);
  document.getElementById("live").append(node);
  document.getElementById("live-empty").hidden = true;
  return entry;
}

function renderCard(set) {
  const e = live.get(set);
  if (!e) return;
  const names = [0, 1].map((i) => {
    const a = e.announced[i];
    return el("span", {}, botLink(e.bots[i]), a && a !== e.bots[i] ? el("span", { class: "announced muted" }, " (announced as " + a + ")") : null);
  });
  e.node.replaceChildren(
    el("h3", {}, setLink(set), " · ", names[0], " vs ", names[1]),
    el("p", {}, "game ", el("span", { class: "live-game" }, e.game), ", ply ", el("span", { class: "live-ply" }, e.ply),
      " ", el("span", { class: "live-result" }, e.result)),
    e.board ? drawBoard(e.board, e.played) : el("p", { class: "muted" }, "waiting for the bots"),
    el("p", { class: "live-moves" }, e.moves.slice(-40).join(" ")));
}

function onEvent(ev) {
  const set = ev.set;
  if (ev.type === "set-started") {
    liveCard(set, ev.bots);
  } else if (ev.type === "set-over") {
    const e = live.get(set);
    if (e) {
      e.node.setAttribute("data-state", ev.how);
      e.result = "set " + ev.how;
      renderCard(set);
      // A finished set stays in view a little, with a link to its replay.
      if (ev.how === "finished") {
        e.node.append(el("p", {}, el("a", { href: "/sets/" + encodeURIComponent(set) + "/replay", class: "replay" }, "replay this set")));
      }
      setTimeout(() => { e.node.remove(); live.delete(set); document.getElementById("live-empty").hidden = live.size > 0; }, 30000);
    }
    route();
    return;
  } else {
    const e = live.get(set);
    if (!e) return;
    if (ev.type === "ready" && ev.bot < 2) e.announced[ev.bot] = ev.name;
    if (ev.type === "game-start") { e.game = ev.game; e.ply = 0; e.moves = []; e.played = null; e.result = ""; }
    if (ev.type === "move") { e.ply = ev.ply; e.played = [ev.player, ev.pit]; e.moves.push(String(ev.pit)); }
    if (ev.type === "game-end") { e.result = "game over: " + ev.reason; e.node.setAttribute("data-game-over", ev.game); }
    if (ev.board) e.board = ev.board;
  }
  renderCard(set);
}

async function startLive() {
  try {
    const snap = await api("/api/live");
    for (const s of snap.sets) {
      const e = liveCard(s.set, s.bots);
      e.announced = s.announced;
      for (const ev of s.events) onEvent(ev);
      e.game = s.game;
      renderCard(s.set);
    }
  } catch (e) { /* the stream below still brings the next events */ }
  const source = new EventSource("/api/live/events");
  source.onmessage = (m) => { try { onEvent(JSON.parse(m.data)); } catch (e) { /* not ours */ } };
  source.addEventListener("lagged", () => { source.close(); for (const e of live.values()) e.node.remove(); live.clear(); startLive(); });
  source.onopen = () => refreshStatus();
}

async function refreshStatus() {
  try {
    const s = await api("/api/status");
    document.getElementById("status").textContent =
      (s.paused ? "paused · " : "") + s.running.length + " running, " + s.sets_done + " sets played, " + s.watchers + " watching";
  } catch (e) {
    document.getElementById("status").textContent = "the server does not answer";
  }
}

window.addEventListener("hashchange", route);
document.addEventListener("DOMContentLoaded", () => {
  route();
  startLive();
  refreshStatus();
  setInterval(refreshStatus, 5000);
});
