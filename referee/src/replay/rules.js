// The move rules of RULES.md for the hus replay viewer: the page holds only the pits
// played, and computes every board from them with these functions. They are a port of
// the engine's one move function (engine/src/sow.rs, Position::play_unchecked), for
// the three presets at every width; the end-to-end tests run them under Node against
// the engine on thousands of random positions (tests/e2e/rules_crosscheck.rs), and the
// page checks the last board of every game against the engine's, which the log holds.
//
// A position is { preset, width, pits: [player 0's 2W pits, player 1's], toMove }, pits
// in each owner's numbering (front row 0..W-1, back row W..2W-1).
var HusRules = (function () {
  'use strict';

  // engine::MIN_SEEDS_TO_MOVE and engine::MAX_SOWN_PER_MOVE (RULES.md).
  const MIN_SEEDS_TO_MOVE = 2;
  const MAX_SOWN_PER_MOVE = 3000;
  const PRESETS = ['hus', 'rulebook', 'mancala-world'];

  // The one-line notation: PRESET WIDTH P0FRONT/P0BACK P1FRONT/P1BACK TOMOVE.
  function parse(text) {
    const fields = String(text).split(' ');
    if (fields.length !== 5) throw new Error('not a position: ' + text);
    const preset = fields[0];
    const width = Number(fields[1]);
    if (PRESETS.indexOf(preset) < 0 || !(width >= 8 && width <= 32)) throw new Error('not a position: ' + text);
    const pits = [fields[2], fields[3]].map((side) => {
      const rows = side.split('/');
      const all = rows.length === 2 ? rows[0].split(',').concat(rows[1].split(',')) : [];
      if (all.length !== 2 * width) throw new Error('not a position: ' + text);
      return all.map(Number);
    });
    const toMove = Number(fields[4]);
    if (toMove !== 0 && toMove !== 1) throw new Error('not a position: ' + text);
    return { preset: preset, width: width, pits: pits, toMove: toMove };
  }

  function format(pos) {
    const w = pos.width;
    const side = (p) => p.slice(0, w).join(',') + '/' + p.slice(w).join(',');
    return pos.preset + ' ' + w + ' ' + side(pos.pits[0]) + ' ' + side(pos.pits[1]) + ' ' + pos.toMove;
  }

  function copy(pos) {
    return { preset: pos.preset, width: pos.width, pits: [pos.pits[0].slice(), pos.pits[1].slice()], toMove: pos.toMove };
  }

  function legal(pos, pit) {
    return Number.isInteger(pit) && pit >= 0 && pit < 2 * pos.width && pos.pits[pos.toMove][pit] >= MIN_SEEDS_TO_MOVE;
  }

  // Empties opponent pit `pit` if it holds seeds; returns its seeds.
  function take(theirs, pit, taken) {
    const seeds = theirs[pit];
    if (seeds !== 0) {
      theirs[pit] = 0;
      taken.push({ pit: pit, seeds: seeds });
    }
    return seeds;
  }

  // The `hus` capture: the opponent's front pit `across`, then a run along their front
  // row in one direction until an empty pit or the row's end, the way that takes more
  // seeds; on a tie toward the opponent's lower pit numbers.
  function takeFrontRun(theirs, w, across, taken) {
    let lower = 0, lowerEnd = across;
    while (lowerEnd > 0 && theirs[lowerEnd - 1] !== 0) { lowerEnd--; lower += theirs[lowerEnd]; }
    let upper = 0, upperEnd = across;
    while (upperEnd + 1 < w && theirs[upperEnd + 1] !== 0) { upperEnd++; upper += theirs[upperEnd]; }
    let total = take(theirs, across, taken);
    if (lower >= upper) {
      for (let pit = across - 1; pit >= lowerEnd; pit--) total += take(theirs, pit, taken);
    } else {
      for (let pit = across + 1; pit <= upperEnd; pit++) total += take(theirs, pit, taken);
    }
    return total;
  }

  // Plays `pit` for the side to move, changing `pos`, and reports the move as the log
  // does: { sown, truncated, events } with events { kind: 'relay', pit, seeds } and
  // { kind: 'capture', landing, taken: [{ pit, seeds }], own, sown, sown_from }.
  // Throws on an illegal pit, leaving `pos` as it was.
  function play(pos, pit) {
    if (!legal(pos, pit)) throw new Error('pit ' + pit + ' is not a legal move in ' + format(pos));
    const w = pos.width, n = 2 * w, preset = pos.preset;
    const mine = pos.pits[pos.toMove], theirs = pos.pits[1 - pos.toMove];
    const events = [];
    let sown = 0, truncated = false;
    let hand = mine[pit];
    mine[pit] = 0;
    let at = pit; // the last pit sown into; the next seed goes to at + 1
    for (;;) {
      const laps = Math.floor(hand / n);
      if (laps > 0) for (let i = 0; i < n; i++) mine[i] += laps;
      for (let k = hand % n; k > 0; k--) {
        at = at + 1 === n ? 0 : at + 1;
        mine[at] += 1;
      }
      sown += hand;
      if (sown >= MAX_SOWN_PER_MOVE) { truncated = true; break; }
      const landed = mine[at];
      if (landed <= 1) break;
      const across = at < w ? w - 1 - at : -1;
      if (across >= 0 && theirs[across] !== 0) {
        const taken = [];
        const seeds = preset === 'hus'
          ? takeFrontRun(theirs, w, across, taken)
          : take(theirs, across, taken) + take(theirs, w + at, taken);
        let own = 0;
        if (preset === 'rulebook') { own = landed; mine[at] = 0; }
        hand = own + seeds;
        if (preset === 'hus') {
          // The first captured seed goes into the landing pit itself.
          events.push({ kind: 'capture', landing: at, taken: taken, own: own, sown: hand, sown_from: at });
          at = at === 0 ? n - 1 : at - 1;
        } else {
          events.push({ kind: 'capture', landing: at, taken: taken, own: own, sown: hand, sown_from: (at + 1) % n });
        }
        continue;
      }
      events.push({ kind: 'relay', pit: at, seeds: landed });
      mine[at] = 0;
      hand = landed;
    }
    pos.toMove = 1 - pos.toMove;
    return { sown: sown, truncated: truncated, events: events };
  }

  const plural = (n, one, many) => n + ' ' + (n === 1 ? one : many);

  // A move in words, as `hus replay` writes it: `pit 5: 13 seeds sown; captured 2 from
  // pits 0, 1 landing in 7; relay from 8 (3 seeds)`.
  function words(pit, report) {
    let s = 'pit ' + pit + ': ' + plural(report.sown, 'seed', 'seeds') + ' sown';
    for (const e of report.events) {
      if (e.kind === 'relay') {
        s += '; relay from ' + e.pit + ' (' + plural(e.seeds, 'seed', 'seeds') + ')';
      } else {
        const total = e.taken.reduce((sum, t) => sum + t.seeds, 0);
        s += '; captured ' + total + ' from ' + (e.taken.length === 1 ? 'pit' : 'pits') + ' ' +
          e.taken.map((t) => t.pit).join(', ') + ' landing in ' + e.landing;
        if (e.own > 0) s += ', lifting its own ' + e.own;
      }
    }
    if (report.truncated) s += '; stopped by the 3000-seed rule';
    return s;
  }

  return { parse: parse, format: format, copy: copy, legal: legal, play: play, words: words };
})();

if (typeof module !== 'undefined') module.exports = HusRules;
