// Issue 21, item 3 (test_web_fits.py): every status, badge, hint, notice and toast the page screen can
// show, drawn in the real bars of a page screen at 360 px and measured. Evaluated by Playwright as one
// async function of the presets' rules; answers {bad: [one line per cut text], checked}.
async (presetRules) => {
  const { statusView, barView, hintLine } = await import('/js/controls.js');
  const { statusNodes, presenceNodes, barNodes } = await import('/js/bars.js');
  const { sendingWords, retryWords, refusalWords } = await import('/js/sending.js');
  const { eventToast } = await import('/js/announce.js');
  const { ApiError } = await import('/js/api.js');
  const { REASON_WORDS, CODE_WORDS } = await import('/js/words.js');
  const { toast } = await import('/js/ui.js');
  const screen = window.dotfight.screen();
  const el = screen.el;
  // Each cut text once (with the first moment it was met at).
  const cutTexts = new Map();
  const bad = { push: (line) => { const key = line.split(': ').slice(1).join(': '); if (!cutTexts.has(key)) cutTexts.set(key, line); } };
  let checked = 0;
  // A box whose text is wider (or, for two-line notices, taller) than the box shows is cut.
  const cut = (box, tall = false) => box.scrollWidth > box.clientWidth + 1 || (tall && box.scrollHeight > box.clientHeight + 1);
  const inside = (inner, outer) => {
    const a = inner.getBoundingClientRect(), b = outer.getBoundingClientRect();
    return a.width === 0 || (a.left >= b.left - 0.5 && a.right <= b.right + 0.5 && a.top >= b.top - 0.5 && a.bottom <= b.bottom + 0.5);
  };
  const top = el.status.closest('.topbar');
  const checkTop = (what) => {
    checked += 1;
    for (const box of el.status.querySelectorAll('.who, .detail')) {
      if (cut(box)) bad.push(`${what}: "${box.textContent}" cut (${box.scrollWidth} > ${box.clientWidth} px)`);
    }
    for (const badge of el.status.querySelectorAll('.badge')) {
      if (!inside(badge, el.status)) bad.push(`${what}: badge "${badge.textContent}" outside the status`);
    }
    if (!inside(el.presence, top)) bad.push(`${what}: presence outside the bar`);
    if (cut(top)) bad.push(`${what}: top bar overflows`);
  };
  const checkBottom = (what, sending) => {
    checked += 1;
    if (cut(el.hint, sending)) bad.push(`${what}: hint "${el.hint.textContent}" cut (${el.hint.scrollWidth} > ${el.hint.clientWidth})`);
    if (!el.actions.hidden && cut(el.actions)) bad.push(`${what}: buttons overflow (${el.actions.scrollWidth} > ${el.actions.clientWidth})`);
    const bar = el.hint.closest('.bottombar');
    if (!inside(el.hint, bar)) bad.push(`${what}: hint outside the bar`);
  };
  const seats = [
    { mode: 'local', side: 'both', token: 't' }, { mode: 'bot', side: 'blue', token: 't' },
    { mode: 'bot', side: 'red', token: 't' }, { mode: 'link', side: 'blue', token: 't' },
    { mode: 'link', side: 'red', token: 't' }, { mode: 'live', side: 'blue', token: 't' },
    { mode: 'live', side: null, token: null },
  ];
  const optionSets = [];
  const sendOpt = { max: 5, from: { b1: ['b2'] }, men: { b1: ['s1'] } };
  const options = (chain, bonus, stand, left, send) => ({
    flicks_left: left, chain: chain && { credits: chain }, bonus, last_stand: stand, kinds: chain ? ['lunge'] : ['snipe', 'lunge'],
    can_stop: true, send, flickable: ['s1'] });
  for (const chain of [null, 1, 12]) for (const bonus of [false, true]) for (const stand of [false, true])
    for (const left of [0, 1, 2]) for (const send of [null, sendOpt]) optionSets.push(options(chain, bonus, stand, left, send));
  // The bottom bar reads the chain, the kinds, the send and stop from the options.
  const barOptions = [options(null, false, false, 1, sendOpt), options(3, false, false, 1, null), options(null, false, false, 1, null)];
  for (const [preset, rules] of Object.entries(presetRules)) {
    for (const seat of seats) {
      for (const sideToAct of ['blue', 'red']) {
        const botSide = seat.mode === 'bot' ? (seat.side === 'blue' ? 'red' : 'blue') : null;
        const models = [];
        for (let drawn = 0; drawn <= rules.bases_per_side; drawn++) models.push({ phase: 'bases', drawn });
        models.push({ phase: 'positioning' });
        for (const sent of [false, true]) models.push({ phase: 'play', sent });
        for (const winner of ['blue', 'red', null]) for (const reason of ['resigned', 'all_crossed_out']) models.push({ phase: 'over', winner, reason });
        for (const m of models) {
          const model = {
            phase: m.phase, sideToAct: m.phase === 'over' ? null : sideToAct, rules, bases: new Map(),
            setup: { bases_drawn: { blue: m.drawn ?? 0, red: m.drawn ?? 0 } }, turn: { sent: !!m.sent },
            winner: m.winner ?? null, endReason: m.reason ?? null, bot: botSide && { side: botSide },
          };
          for (const o of m.phase === 'play' ? optionSets : [null]) {
            for (const online of ['online', 'offline']) {
              const shared = seat.mode === 'link' || seat.mode === 'live';
              for (const presence of shared ? [{ blue: true, red: false }, { blue: false, red: true }] : [null]) {
                const ui = { ...seat, kind: 'snipe', sendFlow: null, sending: null, busy: false, online, byKeys: false };
                el.status.replaceChildren(...statusNodes(statusView(model, o, ui), online === 'offline'));
                el.presence.replaceChildren(...presenceNodes(presence, seat.mode));
                checkTop(`${preset} ${seat.mode}/${seat.side} ${sideToAct} ${JSON.stringify(m)} ${JSON.stringify(o && [o.chain, o.bonus, o.last_stand, o.flicks_left])} ${online}`);
              }
            }
          }
          for (const o of m.phase === 'play' ? barOptions : [null]) {
            // The bottom bar: each hint of this moment, by touch and by keys, through each send step.
            const flows = [null, { step: 'from' }];
            for (let n = 1; n <= rules.send_max; n++) flows.push({ step: 'count', from: 'b1', max: n }, { step: 'to', from: 'b1', count: n });
            for (const sendFlow of (o && o.send ? flows : [null])) for (const byKeys of [false, true]) for (const busy of [false, true]) {
              const ui = { ...seat, kind: 'snipe', sendFlow, sending: null, busy, online: 'online', byKeys };
              screen.renderBar(barView(model, o, ui));
              checkBottom(`${preset} ${seat.mode}/${seat.side} ${m.phase} ${JSON.stringify(sendFlow)} keys=${byKeys}`, false);
            }
          }
        }
      }
    }
  }
  // The aim's line while a pull is on, for each kind and power, by touch and by keys.
  for (const kind of ['Snipe', 'Lunge']) for (let power = 0; power <= 100; power += 1) for (const byKeys of [false, true]) {
    el.hint.textContent = hintLine({ power: power / 100 }, kind, '', byKeys);
    checkBottom(`aim ${kind} ${power} keys=${byKeys}`, false);
  }
  // The notices of a move on its way (two lines, alone in the bar).
  const notices = [sendingWords('flick')];
  for (const what of ['flick', 'draw_base', null]) for (const attempt of [0, 8, 98, 998]) notices.push(retryWords(what, attempt));
  for (const text of notices.filter(Boolean)) {
    screen.renderBar({ hint: text, items: [], sending: true });
    el.hint.textContent = text;
    el.hint.classList.add('sending');
    checkBottom(`notice "${text}"`, true);
  }
  el.hint.classList.remove('sending');
  // Toasts wrap, but must stay on the screen: refusals in the game's words and the events' toasts.
  const toasts = [];
  for (const reason of Object.keys(REASON_WORDS)) for (const flick of [false, true])
    toasts.push(refusalWords(new ApiError('illegal_action', 'x', { status: 400, reason }), flick).toast);
  for (const code of Object.keys(CODE_WORDS)) toasts.push(refusalWords(new ApiError(code, 'x', { status: 400 }), false).toast);
  for (const ev of [{ type: 'bonus', reason: 'two_with_one_bullet' }, { type: 'bonus', reason: 'lunge_again', credits: 12 },
                    { type: 'bonus', reason: 'lunge_again', credits: 0 }, { type: 'turn', side: 'blue', last_stand: true },
                    { type: 'turn', side: 'red' }, { type: 'game_over', winner: 'blue' }]) {
    const t = eventToast(ev, { mode: 'link', side: 'red' });
    if (t) toasts.push(t.text);
  }
  for (const text of toasts) {
    checked += 1;
    for (const at of [null, { x: 10, y: 300 }, { x: 350, y: 300 }]) {
      const t = toast(text, { at });
      const r = t.getBoundingClientRect();
      if (cut(t) || r.left < 0 || r.right > innerWidth) bad.push(`toast "${text}" off the screen`);
    }
  }
  return { bad: [...cutTexts.values()], checked };
}
