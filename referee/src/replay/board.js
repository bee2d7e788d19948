// The board of the hus pages, drawn in SVG: the replay viewer (viewer.js) and the play
// page of `hus play --web` (play/assets/play.js) both draw it with this, so a board
// looks the same wherever it is shown. It only draws: the positions come from the
// caller (computed with HusRules, rules.js).
//
// HusBoard.create(svgElement, W, clockwise, rowNames, options) builds the board once,
// for width W and the sowing direction, with the row labels `rowNames[player] + ' front'`
// (by default P0 and P1: player 0 sits at the bottom), and returns
//   { pits, sides, names, show }
// where pits[player][pit] = { group, count } are the SVG elements of each pit (ids
// `pit-PLAYER-PIT`, in each owner's numbering) and
//   show(pits, mover, nameOf, move)
// shows the seed counts `pits` ([player 0's 2W pits, player 1's]), marks the side of
// `mover` (null for none), writes each name as nameOf(player, isMover), and marks the
// pits of `move` ({ player, pit, events } as HusRules.play reports them, or null).
// `options` (may be left out): `ids: false` gives the elements no ids, for a page that
// shows several boards (the dashboard of `hus serve`); `labels: false` leaves out the
// row labels and the pit numbers, for a small board.
var HusBoard = (function () {
  'use strict';

  const SVG = 'http://www.w3.org/2000/svg';
  function svg(tag, attrs, text) {
    const node = document.createElementNS(SVG, tag);
    for (const [k, v] of Object.entries(attrs || {})) node.setAttribute(k, String(v));
    if (text !== undefined) node.textContent = text;
    return node;
  }

  function create(board, W, clockwise, rowNames, options) {
    const rows = rowNames || ['P0', 'P1'];
    const ids = !options || options.ids !== false;
    const labels = !options || options.labels !== false;
    // The pit at column `col` (0 = left, seen from player 0's seat) of a player's row:
    // RULES.md section 2. Clockwise, player 0's front row runs 0..W-1 left to right and
    // the back row 2W-1..W; player 1's side is the same turned half round.
    // Anticlockwise is the mirror image.
    function pitAt(player, front, col) {
      const mirrored = clockwise ? player === 1 : player === 0;
      if (front) return mirrored ? W - 1 - col : col;
      return mirrored ? W + col : 2 * W - 1 - col;
    }

    // Room on the left for the row labels: the viewer's `P1 front`, or longer names.
    const longest = Math.max(rows[0].length, rows[1].length);
    const CELL = 64, R = 27, LEFT = labels ? 64 + 10 * Math.max(0, longest - 2) : 16, TOP = 40;
    const rowsY = { '1back': TOP + 34, '1front': TOP + 98, '0front': TOP + 182, '0back': TOP + 246 };
    const width = LEFT + W * CELL + 16;
    const height = TOP + 246 + 34 + 44;
    board.setAttribute('viewBox', '0 0 ' + width + ' ' + height);
    board.appendChild(svg('rect', { class: 'frame', x: LEFT - 8, y: TOP, width: W * CELL + 16, height: 280, rx: 18 }));
    const sides = [
      svg('rect', { class: 'side', 'data-side': 0, x: LEFT - 4, y: TOP + 144, width: W * CELL + 8, height: 132, rx: 14 }),
      svg('rect', { class: 'side', 'data-side': 1, x: LEFT - 4, y: TOP + 4, width: W * CELL + 8, height: 132, rx: 14 }),
    ];
    sides.forEach((s) => board.appendChild(s));
    board.appendChild(svg('line', { class: 'divider', x1: LEFT - 8, x2: LEFT + W * CELL + 8, y1: TOP + 140, y2: TOP + 140 }));
    const names = [0, 1].map((p) => svg('text', Object.assign(
      { class: 'name', x: LEFT + (W * CELL) / 2, y: p === 0 ? TOP + 306 : TOP - 14 }, ids ? { id: 'name-' + p } : {})));
    names.forEach((n) => board.appendChild(n));
    // pits[player][pit] = { group, count }
    const pits = [[], []];
    for (const player of [1, 0]) {
      for (const front of player === 1 ? [false, true] : [true, false]) {
        const y = rowsY[player + (front ? 'front' : 'back')];
        const row = front ? 'front' : 'back';
        if (labels) board.appendChild(svg('text', { class: 'rowlabel', x: LEFT - 14, y: y }, rows[player] + ' ' + row));
        for (let col = 0; col < W; col++) {
          const pit = pitAt(player, front, col);
          const x = LEFT + col * CELL + CELL / 2;
          const group = svg('g', ids ? { class: 'pit', id: 'pit-' + player + '-' + pit } : { class: 'pit' });
          group.appendChild(svg('circle', { cx: x, cy: y, r: R }));
          const count = svg('text', {
            class: 'count', x: x, y: y - 3,
            'data-player': player, 'data-pit': pit, 'data-row': row, 'data-col': col,
          });
          group.appendChild(count);
          if (labels) group.appendChild(svg('text', { class: 'num', x: x, y: y + 20 }, String(pit)));
          board.appendChild(group);
          pits[player][pit] = { group: group, count: count };
        }
      }
    }

    function show(b, mover, nameOf, move) {
      for (const p of [0, 1]) {
        for (let i = 0; i < 2 * W; i++) {
          const cell = pits[p][i];
          cell.count.textContent = String(b[p][i]);
          cell.group.setAttribute('class', 'pit' + (b[p][i] === 0 ? ' empty' : ''));
        }
        const isMover = p === mover;
        sides[p].setAttribute('class', 'side' + (isMover ? ' mover' : ''));
        names[p].setAttribute('class', 'name' + (isMover ? ' mover' : ''));
        names[p].textContent = nameOf(p, isMover);
      }
      if (move) {
        const mark = (player, pit, cls) => pits[player][pit].group.classList.add(cls);
        for (const e of move.events) {
          if (e.kind === 'relay') mark(move.player, e.pit, 'relay');
          if (e.kind === 'capture') {
            mark(move.player, e.landing, 'landing');
            for (const t of e.taken) mark(1 - move.player, t.pit, 'taken');
          }
        }
        mark(move.player, move.pit, 'played');
      }
    }

    return { pits: pits, sides: sides, names: names, show: show };
  }

  return { create: create };
})();
