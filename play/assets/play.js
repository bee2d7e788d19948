// The page of `hus play --web`: a person plays a bot by clicking the pits of the
// replay viewer's board (board.js, with rules.js computing every move). The server
// (play/src/web.rs) sends the whole view of the game on every change as a server-sent
// event: the start of the game, every move so far, and while it is the person's turn
// the legal pits and the turn's game and ply. A click on a legal pit posts
// { tab, game, ply, pit } to /api/move; the server answers the referee's `turn` with it.
// Every text is inserted with textContent.
//
// For tests, the body carries the state: data-tab (this tab's id), data-phase (starting, waiting, your-turn,
// over, stopped) as the server's view.phase says (play/src/web.rs, `Phase`: stopped is
// hus play stopped before the set ended), or `taken` set here while another tab holds
// the seat, data-seq, data-game, data-ply, data-legal (the legal pits), and at
// the end data-outcome (win, loss, draw) and data-points (`you-bot`); data-check is
// `failed` when the board computed here ever differs from the referee's.
(function () {
  'use strict';

  const $ = (id) => document.getElementById(id);
  const bytes = new Uint8Array(12);
  crypto.getRandomValues(bytes);
  const tab = Array.from(bytes, (b) => b.toString(16).padStart(2, '0')).join('');
  document.body.dataset.tab = tab;

  let view = null;     // the last view received
  let board = null;    // HusBoard, built once the rules are known
  let legal = [];      // the person's legal pits now
  let sending = false; // a move is on its way
  let source = null;

  function el(tag, attrs, text) {
    const node = document.createElement(tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, v);
    if (text !== undefined) node.textContent = text;
    return node;
  }
  const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many);
  const outcomeText = (o) => ({ win: 'you won', loss: 'the bot won', draw: 'drawn' }[o] || o);

  function setStatus(text) { $('status').textContent = text; }
  function showError(text) {
    const box = $('play-error');
    box.hidden = text === null;
    box.textContent = text === null ? '' : text;
  }

  // The game so far, played with HusRules from its start: the person is player 0
  // (at the bottom), the bot player 1.
  function replay(v) {
    const g = v.game;
    const pos = {
      preset: v.rules.preset, width: v.rules.width,
      pits: [g.start[0].slice(), g.start[1].slice()], toMove: g.you_first ? 0 : 1,
    };
    const moves = [];
    let error = null;
    for (const m of g.moves) {
      const player = pos.toMove;
      if ((m.by === 'you' ? 0 : 1) !== player) {
        error = 'move ' + (moves.length + 1) + ' was not ' + m.by + '\u2019s to play';
        break;
      }
      let report;
      try {
        report = HusRules.play(pos, m.pit);
      } catch (e) {
        error = e.message;
        break;
      }
      moves.push({ player: player, pit: m.pit, events: report.events, sown: report.sown,
        text: HusRules.words(m.pit, report) });
    }
    if (error === null && moves.length === g.board_plies) {
      const mine = pos.pits[0].join(','), theirs = pos.pits[1].join(',');
      if (mine !== g.board[0].join(',') || theirs !== g.board[1].join(',')) {
        error = 'after ' + plural(moves.length, 'ply', 'plies') + ' this page has ' + mine + ' / ' + theirs +
          ' but the referee has ' + g.board[0].join(',') + ' / ' + g.board[1].join(',');
      }
    }
    return { pos: pos, moves: moves, error: error };
  }

  function buildBoard(v) {
    const W = v.rules.width;
    board = HusBoard.create($('board'), W, v.rules.sowing === 'clockwise', ['you', 'bot']);
    for (let pit = 0; pit < 2 * W; pit++) {
      board.pits[0][pit].group.addEventListener('click', () => choose(pit));
    }
    $('numbering').textContent = 'Your pits are at the bottom, numbered in sowing order (' + v.rules.sowing +
      '): front row 0 to ' + (W - 1) + ', back row ' + W + ' to ' + (2 * W - 1) + '.';
  }

  function choose(pit) {
    if (!view || view.phase !== 'your-turn' || !view.game || !view.game.turn) {
      showError('It is not your turn: wait for the bot\u2019s move.');
      return;
    }
    if (legal.indexOf(pit) < 0) {
      showError('Pit ' + pit + ' is not a legal move: the legal pits are ' + legal.join(', ') + '.');
      return;
    }
    if (sending) return;
    sending = true;
    showError(null);
    const body = JSON.stringify({ tab: tab, game: view.game.game, ply: view.game.turn.ply, pit: pit });
    fetch('/api/move', { method: 'POST', headers: { 'Content-Type': 'application/json' }, body: body })
      .then((r) => r.json().then((answer) => ({ ok: r.ok, answer: answer })))
      .then(({ ok, answer }) => {
        sending = false;
        if (!ok) showError('The move was refused: ' + answer.error);
      })
      .catch((e) => {
        sending = false;
        showError('The move could not be sent: ' + e.message);
      });
  }

  function gameResultText(r) {
    let s = 'Game ' + r.game + ': ' + outcomeText(r.outcome) + ' by ' + r.reason + ' after ' +
      plural(r.plies, 'ply', 'plies') + '; points you ' + r.points[0] + ' \u2013 ' + r.points[1] + ' bot';
    if (r.fault_by) s += ' (fault by ' + (r.fault_by === 'you' ? 'you' : 'the bot') + ': ' + (r.detail || '') + ')';
    return s;
  }

  function show(v) {
    view = v;
    const body = document.body.dataset;
    body.phase = v.phase;
    body.seq = String(v.seq);
    $('source').textContent = 'against ' + v.bot;
    document.title = 'hus play against ' + v.bot;
    if (v.rules) {
      $('set-line').textContent = 'You vs ' + v.bot + ' \u00b7 ' + v.rules.preset + ', width ' + v.rules.width +
        ' (' + v.rules.sowing + ') \u00b7 ' + v.time + ' \u00b7 ' + plural(v.games, 'game', 'games');
      if (board === null) buildBoard(v);
    }
    legal = v.phase === 'your-turn' && v.game && v.game.turn ? v.game.turn.legal : [];
    body.legal = legal.join(',');
    body.game = v.game ? String(v.game.game) : '';
    body.ply = v.game && v.game.turn ? String(v.game.turn.ply) : '';

    const list = $('moves');
    list.replaceChildren();
    let status = '';
    if (v.game && board) {
      const g = replay(v);
      const check = $('check-error');
      if (g.error !== null) {
        body.check = 'failed';
        check.hidden = false;
        check.textContent = 'This page\u2019s rules disagree with the referee in game ' + v.game.game + ' (' +
          g.error + '): the board shown may be wrong. The referee\u2019s log is right; please report this.';
      } else if (body.check !== 'failed') {
        body.check = 'ok';
      }
      const last = g.moves.length > 0 ? g.moves[g.moves.length - 1] : null;
      const ended = v.results.length > 0 && v.results[v.results.length - 1].game === v.game.game;
      const mover = ended || v.phase === 'over' || v.phase === 'stopped' ? null : g.pos.toMove;
      board.show(g.pos.pits, mover, (p, isMover) => (p === 0 ? 'you' : 'bot: ' + v.bot) +
        (isMover ? (p === 0 ? '  \u2190 your move' : '  \u2190 thinking') : ''), last);
      for (const pit of legal) board.pits[0][pit].group.classList.add('legal');
      g.moves.forEach((m, k) => {
        let taken = 0;
        for (const e of m.events) if (e.kind === 'capture') for (const t of e.taken) taken += t.seeds;
        const li = el('li', { class: m.player === 0 ? 'you' : 'bot', 'data-ply': String(k) },
          (k + 1) + '. ' + (m.player === 0 ? 'you' : 'bot') + ' pit ' + m.pit + ' \u00b7 ' + m.sown + ' sown');
        if (taken > 0) li.appendChild(el('span', { class: 'took' }, ' \u00b7 took ' + taken));
        list.appendChild(li);
      });
      // The bot's last move in words, and the person's since.
      const info = [];
      for (let k = Math.max(0, g.moves.length - 2); k < g.moves.length; k++) {
        const m = g.moves[k];
        info.push((m.player === 0 ? 'You played ' : 'The bot played ') + m.text + '.');
      }
      $('move-info').textContent = info.length > 0 ? info.join(' ') :
        'Game ' + v.game.game + ' starts: ' + (v.game.you_first ? 'you move' : 'the bot moves') + ' first.';
      if (v.phase === 'your-turn') status = 'Your move in game ' + v.game.game + ': click a highlighted pit.';
      else if (ended) status = gameResultText(v.results[v.results.length - 1]) + '.';
      else if (v.phase === 'waiting') status = 'The bot is thinking\u2026';
    }
    if (status === '') status = v.phase === 'starting' || !v.game ? 'Waiting for the game to start\u2026' : '';

    const end = $('end-info');
    end.replaceChildren();
    for (const r of v.results) end.appendChild(el('div', { class: 'game-result' }, gameResultText(r)));
    if (v.set) {
      const text = (v.set.outcome === 'win' ? 'You won the set' : v.set.outcome === 'loss' ? 'The bot won the set' :
        'The set is drawn') + ': points you ' + v.set.points[0] + ' \u2013 ' + v.set.points[1] + ' bot';
      $('set-result').textContent = text + '.';
      end.appendChild(el('div', { class: 'result' }, 'Result: ' + text));
      body.outcome = v.set.outcome;
      body.points = v.set.points[0] + '-' + v.set.points[1];
      status = 'The set is over. ' + text + '.' + (v.closed ? ' hus play has finished: the game is in its log.' : '');
    }
    if (v.note) status += (status ? ' ' : '') + v.note.charAt(0).toUpperCase() + v.note.slice(1) + '.';
    if (v.phase === 'stopped' && !v.set) status = 'hus play stopped before the set ended' + (v.note ? ': ' + v.note : '') + '.';
    setStatus(status);
    if (v.phase !== 'your-turn') showError(null);
    if (v.closed && source) source.close();
  }

  function connect() {
    source = new EventSource('/api/events?tab=' + tab);
    source.addEventListener('view', (e) => show(JSON.parse(e.data)));
    source.addEventListener('taken', (e) => {
      source.close();
      setStatus('This game is already open in another tab or browser: play there, or close it (this page ' +
        'takes the seat once the other is gone).');
      document.body.dataset.phase = 'taken';
      setTimeout(connect, 2000);
    });
    source.addEventListener('error', () => {
      if (view && view.closed) return;
      if (source.readyState === EventSource.CLOSED) {
        setStatus('Lost hus play (was it stopped?); trying again\u2026');
        setTimeout(connect, 2000);
      }
    });
  }

  connect();
})();
