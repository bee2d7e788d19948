// The hus replay viewer. The set is the JSON in #hus-data (written by `hus replay
// --html`): for each game its starting position, the pit and time of every move, and
// the engine's last position. The boards, relays and captures are computed here with
// HusRules (rules.js) and drawn with HusBoard (board.js), and the last board of each game is checked against the
// engine's: a disagreement is shown, never hidden. Every text from the log is inserted
// with textContent, never parsed as HTML.
//
// The URL hash opens a position: #game=2&ply=5. For tests, #game=1&steps=5 presses the
// "Next" button five times, through the same handler as a click, and #check computes
// every game and lists every position in a hidden <pre id="positions">.
(function () {
  'use strict';

  const data = JSON.parse(document.getElementById('hus-data').textContent);
  const W = data.rules.width;
  const clockwise = data.rules.sowing === 'clockwise';
  const $ = (id) => document.getElementById(id);

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  // A page that `hus serve` sends names the bots by their league's names (in the links
  // it puts on top, nav.serve's data-a and data-b); a file, by the names they announced.
  const served = document.querySelector('nav.serve[data-a]');
  const names = served ? [served.dataset.a, served.dataset.b] : [null, null];
  const label = (bot) => {
    const b = data.bots[bot];
    const name = names[bot] !== null && names[bot] !== undefined ? names[bot] : b.name;
    return name === null ? b.letter : b.letter + ' (' + name + ')';
  };
  const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many);
  const ms = (x) => (x === null || x === undefined ? '' : x.toFixed(2) + ' ms');

  // ---- the board, built once (board.js) -------------------------------------------
  const board = HusBoard.create($('board'), W, clockwise);

  // The bot that is `player` in game `g` (expanded, or being expanded).
  function botOfIn(g, player) { return player === g.startToMove ? g.first : 1 - g.first; }

  // ---- the games, computed from their moves ---------------------------------------
  // Adds to game `g` its moves in full (player, bot, sown, events, words), every board
  // (boards[k] after k moves), and `error` when the rules here disagree with the log.
  function expand(g) {
    if (g.boards) return g;
    const pos = HusRules.parse(g.start);
    // The bot `first` is the player to move at the start: player 0 from the starting
    // position, either player from an opening.
    g.startToMove = pos.toMove;
    g.boards = [HusRules.copy(pos)];
    g.moves = [];
    g.error = null;
    for (let k = 0; k < g.pits.length; k++) {
      const player = pos.toMove;
      const pit = g.pits[k];
      let report;
      try {
        report = HusRules.play(pos, pit);
      } catch (e) {
        g.error = 'ply ' + k + ': ' + e.message;
        break;
      }
      g.moves.push({
        ply: k, player: player, bot: botOfIn(g, player), pit: pit, ms: g.ms[k],
        mate: g.mates ? g.mates[k] : undefined,
        sown: report.sown, truncated: report.truncated, events: report.events, text: HusRules.words(pit, report),
      });
      g.boards.push(HusRules.copy(pos));
    }
    if (g.error === null && HusRules.format(pos) !== g.last) {
      g.error = 'after ' + plural(g.moves.length, 'ply', 'plies') + ' the viewer has ' + HusRules.format(pos) +
        ' but the engine has ' + g.last;
    }
    if (g.error !== null) {
      document.body.dataset.check = 'failed';
      const warning = $('check-error');
      warning.hidden = false;
      warning.textContent = 'The viewer\u2019s rules disagree with the log in game ' + g.game + ' (' + g.error +
        '): the boards shown may be wrong. The log itself was checked by the engine; please report this.';
    }
    return g;
  }

  // ---- state -----------------------------------------------------------------------
  let game = null;     // the game shown
  let ply = 0;         // moves played in the position shown
  let timer = null;
  const buttons = { first: $('first'), prev: $('prev'), play: $('play'), next: $('next'), last: $('last') };
  const slider = $('slider');

  function boardAt(k) { return game.boards[k].pits; }
  function toMoveAt(k) { return game.boards[k].toMove; }
  function botOf(player) { return botOfIn(game, player); }
  const plies = () => game.moves.length;

  function endText(g) {
    const e = g.end;
    if (!e) return 'unfinished: the log stops during this game';
    const who = e.winner === null ? 'draw' : label(e.winner) + ' won';
    return who + ' by ' + e.reason + ' after ' + plural(e.plies, 'ply', 'plies') +
      (e.double ? ' (double)' : '') + '; points A ' + e.points[0] + ' \u2013 ' + e.points[1] + ' B';
  }

  function render() {
    const b = boardAt(ply);
    const mover = toMoveAt(ply);
    const over = ply === plies() && game.end !== null;
    const last = ply > 0 ? game.moves[ply - 1] : null;
    board.show(b, over ? null : mover, (p, isMover) =>
      'player ' + p + ': ' + label(botOf(p)) + (isMover ? '  \u2190 to move' : ''), last);
    const info = $('move-info');
    if (ply > 0) {
      const m = game.moves[ply - 1];
      info.textContent = 'Ply ' + (m.ply + 1) + ': ' + label(m.bot) + ', player ' + m.player +
        ', played in ' + ms(m.ms) + ' \u2014 ' + m.text + '.';
    } else {
      info.textContent = 'Start of game ' + game.game + (game.start === data.rules.start ? '' : ', from an opening') +
        '. Player ' + game.startToMove + ' (' + label(game.first) + ') moves first.';
    }
    if (over) {
      const faults = game.faults.map((f) => label(f.bot) + ' ' + f.kind).join(', ');
      info.textContent += ' Game over' + (faults ? ' (fault: ' + faults + ')' : '') + ': ' + endText(game) + '.';
    }
    slider.max = String(plies());
    slider.value = String(ply);
    $('ply-label').textContent = 'ply ' + ply + ' of ' + plies();
    buttons.first.disabled = buttons.prev.disabled = ply === 0;
    buttons.next.disabled = buttons.last.disabled = ply === plies();
    const list = $('moves');
    for (const li of list.children) {
      const current = Number(li.dataset.ply) + 1 === ply;
      li.classList.toggle('current', current);
      if (current && li.scrollIntoView) li.scrollIntoView({ block: 'nearest' });
    }
    $('end-info').classList.toggle('reached', ply === plies());
    document.body.dataset.game = String(game.game);
    document.body.dataset.ply = String(ply);
    try {
      history.replaceState(null, '', '#game=' + game.game + '&ply=' + ply);
    } catch (e) {
      // Some browsers refuse history changes on file:// pages; the hash is a convenience.
    }
  }

  function setPly(k) {
    const n = Math.max(0, Math.min(plies(), k | 0));
    ply = n;
    render();
  }

  function stop() {
    if (timer !== null) clearInterval(timer);
    timer = null;
    buttons.play.textContent = 'Play';
  }

  function selectGame(index) {
    stop();
    game = expand(data.games[index]);
    $('game-select').value = String(index);
    $('game-result').textContent = [0, 1].map((p) => 'player ' + p +
      (p === game.startToMove ? ' (moves first): ' : ': ') + label(botOf(p))).join(' \u00b7 ');
    const list = $('moves');
    list.replaceChildren();
    for (const m of game.moves) {
      const li = el('li', { 'data-ply': m.ply });
      let taken = 0;
      for (const e of m.events) {
        if (e.kind === 'capture') for (const t of e.taken) taken += t.seeds;
      }
      // In a team set, the member who played it: `3. A greedy pit 5`.
      const members = data.bots[m.bot].members;
      const who = data.bots[m.bot].letter +
        (members && m.mate !== undefined ? ' ' + (members[m.mate] || '?') : '');
      const button = el('button', { type: 'button' },
        (m.ply + 1) + '. ' + who + ' pit ' + m.pit + ' \u00b7 ' + m.sown + ' sown \u00b7 ' + ms(m.ms));
      if (taken > 0) {
        li.classList.add('capture');
        button.appendChild(el('span', { class: 'took' }, ' \u00b7 took ' + taken));
      }
      button.addEventListener('click', () => { stop(); setPly(m.ply + 1); });
      li.appendChild(button);
      list.appendChild(li);
    }
    const end = $('end-info');
    end.replaceChildren();
    end.appendChild(el('div', { class: 'result' }, 'Result: ' + endText(game)));
    for (const f of game.faults) {
      end.appendChild(el('div', { class: 'fault' },
        'Fault ' + f.at + ' by ' + label(f.bot) + ': ' + f.kind + ' \u2014 ' + f.detail +
        (f.ms === null ? '' : ' (' + ms(f.ms) + ')')));
      if (f.line !== null) end.appendChild(el('div', { class: 'line' }, 'line: ' + f.line));
    }
    setPly(0);
  }

  // ---- the set ---------------------------------------------------------------------
  document.title = 'hus replay: ' + label(0) + ' vs ' + label(1);
  $('source').textContent = data.source;
  const sel = data.selection;
  const held = sel === null
    ? data.games.length + ' of ' + data.games_planned + ' games'
    : (sel.first === sel.last ? 'game ' + sel.first : 'games ' + sel.first + ' to ' + sel.last) + ' of the ' +
      plural(sel.of, 'game', 'games') + ' in the log (' + data.games_planned + ' planned)';
  $('set-line').textContent = label(0) + ' vs ' + label(1) + ' \u00b7 ' + data.rules.preset + ', width ' + W +
    ' (' + data.rules.sowing + ') \u00b7 ' + data.time + ' \u00b7 seed ' + data.seed + ' \u00b7 ' +
    held + ' \u00b7 ' + data.referee;
  const s = data.set;
  $('set-result').textContent = 'Points A ' + s.points[0] + ' \u2013 ' + s.points[1] + ' B \u00b7 won ' +
    s.wins[0] + '\u2013' + s.wins[1] + ', drawn ' + s.draws + ', faults ' + s.faults[0] + '\u2013' + s.faults[1] +
    ' \u00b7 ' + data.status_text;
  $('numbering').textContent = 'Pit numbers are each owner\u2019s own, in sowing order (' + data.rules.sowing +
    '): front row 0 to ' + (W - 1) + ', back row ' + W + ' to ' + (2 * W - 1) + '. Player 0 sits at the bottom. ' +
    'Plies are counted from 1 in each game (ply 3 is the third move; the log\u2019s ply field counts from 0). ' +
    'Keys: \u2190 \u2192 a ply, Home End, space to play, n p (Page Down, Page Up) the next and the previous game.';
  const select = $('game-select');
  data.games.forEach((g, i) => {
    select.appendChild(el('option', { value: String(i) }, 'Game ' + g.game + ': ' + endText(g)));
  });

  // ---- controls --------------------------------------------------------------------
  buttons.first.addEventListener('click', () => { stop(); setPly(0); });
  buttons.prev.addEventListener('click', () => { stop(); setPly(ply - 1); });
  buttons.next.addEventListener('click', () => { setPly(ply + 1); if (ply === plies()) stop(); });
  buttons.last.addEventListener('click', () => { stop(); setPly(plies()); });
  buttons.play.addEventListener('click', () => {
    if (timer !== null) { stop(); return; }
    if (ply === plies()) setPly(0);
    buttons.play.textContent = 'Pause';
    timer = setInterval(() => buttons.next.click(), Number($('speed').value));
  });
  $('speed').addEventListener('change', () => {
    if (timer !== null) { stop(); buttons.play.click(); }
  });
  slider.addEventListener('input', () => { stop(); setPly(Number(slider.value)); });
  select.addEventListener('change', () => selectGame(Number(select.value)));
  document.addEventListener('keydown', (e) => {
    const tag = e.target && e.target.tagName;
    if (tag === 'INPUT' || tag === 'SELECT') return;
    // A focused button already answers the space bar with a click of its own.
    if (tag === 'BUTTON' && e.key === ' ') return;
    const key = { ArrowRight: 'next', ArrowLeft: 'prev', Home: 'first', End: 'last', ' ': 'play' }[e.key];
    if (key) { e.preventDefault(); buttons[key].click(); return; }
    // The next and the previous game: n and p, or Page Down and Page Up.
    const step = { n: 1, PageDown: 1, p: -1, PageUp: -1 }[e.key];
    const index = Number(select.value) + (step || 0);
    if (step && !e.ctrlKey && !e.metaKey && !e.altKey && index >= 0 && index < data.games.length) {
      e.preventDefault();
      selectGame(index);
    }
  });

  function applyHash(hash) {
    const params = new URLSearchParams(String(hash).replace(/^#/, ''));
    const number = parseInt(params.get('game'), 10);
    const index = data.games.findIndex((g) => g.game === number);
    if (index >= 0 && data.games[index] !== game) selectGame(index);
    const k = parseInt(params.get('ply'), 10);
    if (!Number.isNaN(k)) { stop(); setPly(k); }
    const steps = parseInt(params.get('steps'), 10);
    for (let i = 0; i < (Number.isNaN(steps) ? 0 : steps); i++) buttons.next.click();
  }

  if (data.games.length === 0) {
    $('move-info').textContent = 'The log holds no game.';
    for (const b of Object.values(buttons)) b.disabled = true;
    return;
  }
  // Read the hash before the first render replaces it with the position shown.
  const opening = location.hash;
  selectGame(0);
  applyHash(opening);
  window.addEventListener('hashchange', () => applyHash(location.hash));

  // #check (for tests): every position of every game, `GAME PLY POSITION` a line.
  if (new URLSearchParams(opening.replace(/^#/, '')).has('check')) {
    const lines = [];
    for (const g of data.games) {
      expand(g);
      g.boards.forEach((b, k) => lines.push(g.game + ' ' + k + ' ' + HusRules.format(b)));
    }
    if (document.body.dataset.check !== 'failed') document.body.dataset.check = 'ok';
    document.body.appendChild(el('pre', { id: 'positions', hidden: '' }, lines.join('\n')));
  }
})();
