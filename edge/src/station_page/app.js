// The station screen. Plain JS, no build step, nothing loaded from
// elsewhere. It reads the edge's REST routes with the API key and follows
// the station's `station.scanned` events on the live stream, so a scan on
// the station's hardware scanner shows here as soon as the edge has
// handled it. Scans typed here (a person, or a keyboard-wedge scanner on
// this computer) go to POST /v1/edge/stations/{station}/scan, the same
// path as the hardware scanner's.
'use strict';

(() => {
  const station = document.body.dataset.station;
  const STORE = 'depot.station.key';
  // The edge's routes, also behind a proxy that serves it under a prefix.
  const base = location.pathname.slice(0, location.pathname.lastIndexOf('/stations/'));
  const $ = (id) => document.getElementById(id);

  const WEIGHT_EVERY_MS = 400;
  const STATES_EVERY_MS = 2000;
  const BACKOFF_FIRST_MS = 500;
  const BACKOFF_MAX_MS = 10000;
  // A scan the edge did not answer is sent again, with its key, this many
  // times in all.
  const SCAN_TRIES = 3;

  let key = null;
  let business = null;
  let view = null; // the station, as GET /v1/edge/stations answers it
  // Each start (a key given) is a generation; the loops of an earlier one
  // stop when they see a later one.
  let generation = 0;
  let running = false;
  let socket = null;
  let after = null; // `next` of the last frame: where a reconnect resumes
  let backoff = BACKOFF_FIRST_MS;
  let refreshing = null;
  let refreshAgain = false;

  // --- The key: from the fragment once, then from this browser's storage.

  function stored() {
    try {
      return localStorage.getItem(STORE);
    } catch (_) {
      return null;
    }
  }

  function store(value) {
    try {
      if (value === null) localStorage.removeItem(STORE);
      else localStorage.setItem(STORE, value);
    } catch (_) {
      // Storage refused (a private window): the key lasts for this page.
    }
  }

  function takeKey() {
    const m = /(?:^#|&)key=([^&]*)/.exec(location.hash);
    if (m) {
      store(decodeURIComponent(m[1]));
      // Out of the address bar, the history and any screenshot of it.
      history.replaceState(null, '', location.pathname + location.search);
      return decodeURIComponent(m[1]);
    }
    return stored();
  }

  function askForKey(why) {
    running = false;
    generation += 1;
    key = null;
    if (socket) socket.close();
    $('screen').hidden = true;
    $('key-form').hidden = false;
    if (why) {
      $('key-why').textContent = why;
      $('key-why').dataset.state = 'bad';
    }
    $('key').value = '';
    $('key').focus();
  }

  class Unauthorized extends Error {}

  // A fresh Idempotency-Key: one per scan, sent again with every retry of
  // that scan, so the edge applies it once. crypto.randomUUID needs a
  // secure context (https or localhost); a station on plain http gets a
  // version-4 UUID from getRandomValues, which works everywhere.
  function newKey() {
    if (window.crypto && typeof window.crypto.randomUUID === 'function') {
      try {
        return window.crypto.randomUUID();
      } catch (_) {
        // Not a secure context: made below.
      }
    }
    const b = new Uint8Array(16);
    if (window.crypto && window.crypto.getRandomValues) window.crypto.getRandomValues(b);
    else for (let i = 0; i < b.length; i++) b[i] = Math.floor(Math.random() * 256);
    b[6] = (b[6] & 0x0f) | 0x40;
    b[8] = (b[8] & 0x3f) | 0x80;
    const h = Array.from(b, (x) => x.toString(16).padStart(2, '0')).join('');
    return h.slice(0, 8) + '-' + h.slice(8, 12) + '-' + h.slice(12, 16) + '-' + h.slice(16, 20) + '-' + h.slice(20);
  }

  const sleep = (ms) => new Promise((done) => setTimeout(done, ms));

  async function api(method, path, body, idempotencyKey) {
    const init = { method, headers: { 'X-API-KEY': key }, cache: 'no-store' };
    if (idempotencyKey) init.headers['Idempotency-Key'] = idempotencyKey;
    if (body !== undefined) {
      init.headers['Content-Type'] = 'application/json';
      init.body = JSON.stringify(body);
    }
    const r = await fetch(base + path, init);
    let json = null;
    try {
      json = await r.json();
    } catch (_) {
      json = null;
    }
    if (r.status === 401) {
      store(null);
      askForKey('The edge refused the key (' + ((json && json.message) || 'unauthorized') + '): give a valid one.');
      throw new Unauthorized();
    }
    return { status: r.status, body: json };
  }

  // --- Small display helpers.

  function setState(id, state, text) {
    const el = $(id);
    el.dataset.state = state;
    el.querySelector('.value').textContent = text;
    el.title = text;
  }

  function clock(iso) {
    const d = iso ? new Date(iso) : new Date();
    return d.toLocaleTimeString([], { hour: '2-digit', minute: '2-digit', second: '2-digit' });
  }

  function words(s) {
    return String(s).replace(/_/g, ' ');
  }

  let audio = null;
  function beep(ok) {
    try {
      audio = audio || new AudioContext();
      const osc = audio.createOscillator();
      const gain = audio.createGain();
      osc.frequency.value = ok ? 1320 : 220;
      osc.type = ok ? 'sine' : 'square';
      gain.gain.value = 0.15;
      osc.connect(gain).connect(audio.destination);
      osc.start();
      osc.stop(audio.currentTime + (ok ? 0.12 : 0.45));
    } catch (_) {
      // No sound here: the colour says it.
    }
  }

  // --- The last answer, large: green accepted, red rejected; neutral
  // when there is nothing to answer for.

  // How long an accepted answer stays green once the station has no task
  // (the order packed, the task cleared): long enough to be seen from the
  // table, then the screen says it waits, not a lasting green ACCEPTED.
  const OK_HOLD_MS = 5000;
  // Characters from which an answer is set smaller.
  const LONG_MESSAGE = 80;

  // The answer on screen: {report, input, at, since}.
  let shown = null;
  let holdTimer = null;

  function describeInput(input) {
    if (!input) return '';
    if (input.scan !== undefined) {
      return 'Scanned ' + JSON.stringify(input.scan) + (input.scanner ? ' on ' + input.scanner : '');
    }
    if (input.task !== undefined) return 'Task set';
    if (input.pack !== undefined) return 'Pack requested';
    if (input.release !== undefined) return 'Task released';
    return '';
  }

  // An error entry as the API sends it: `{name, status}`.
  function describeError(e) {
    if (!e || typeof e !== 'object') return String(e);
    return [e.name, e.status].filter((x) => x !== undefined && x !== null && x !== '').join(': ');
  }

  const idle = () => !view || !view.task || view.task.task === 'idle';

  // `report` is a station's answer: {status, message, errors}, from an
  // event, from the station's `last` (`loaded`: given before this page
  // opened, so not held green), or from a station route. `fresh` flashes
  // and beeps: once per answer, whichever of the stream and the route
  // brings it first.
  function showResult(report, input, at, fresh, loaded) {
    shown = { report, input, at, since: loaded ? 0 : Date.now() };
    paintResult();
    const el = $('result');
    const ok = report.status < 400;
    if (fresh) {
      el.classList.remove('fresh');
      void el.offsetWidth; // restart the flash even for the same answer
      el.classList.add('fresh');
      beep(ok);
    }
    clearTimeout(holdTimer);
    if (ok) holdTimer = setTimeout(paintResult, OK_HOLD_MS + 50);
  }

  function paintResult() {
    const el = $('result');
    const errors = $('result-errors');
    const neutral = (verdict, message, note) => {
      el.dataset.state = 'idle';
      delete el.dataset.status;
      $('result-verdict').textContent = verdict;
      $('result-message').textContent = message;
      $('result-message').classList.remove('long');
      errors.replaceChildren();
      $('result-input').textContent = note;
    };
    if (!shown) {
      if (idle()) neutral('No task', 'Waiting for a task to be set for this station', '');
      else neutral('Ready', 'Waiting for the first scan', '');
      return;
    }
    const { report, input, at, since } = shown;
    const ok = report.status < 400;
    const when = at ? clock(at) : '';
    // Accepted and nothing more to do: the station waits. What it last
    // said stays, small.
    if (ok && idle() && Date.now() - since >= OK_HOLD_MS) {
      neutral('No task', 'Waiting for the next task', ['Last: ' + report.message, when].filter(Boolean).join(' · '));
      return;
    }
    el.dataset.state = ok ? 'ok' : 'error';
    el.dataset.status = String(report.status);
    $('result-verdict').textContent = ok ? '✔ Accepted' : '✘ Rejected';
    $('result-message').textContent = report.message;
    // A refusal that says what to do is long: smaller, so it is read whole
    // with its errors, not scrolled.
    $('result-message').classList.toggle('long', report.message.length > LONG_MESSAGE);
    errors.replaceChildren(
      ...(report.errors || []).map((e) => {
        const li = document.createElement('li');
        li.textContent = describeError(e);
        return li;
      }),
    );
    $('result-input').textContent = [describeInput(input), when].filter(Boolean).join(' · ');
  }

  // --- The task and what is left of it.

  function renderLines(verb, rows) {
    $('left-verb').textContent = verb;
    const total = rows.reduce((n, r) => n + Math.max(0, r.left), 0);
    $('remaining-total').textContent = rows.length ? String(total) : '–';
    const next = rows.find((r) => r.left > 0);
    $('lines').classList.toggle('nowhere', !rows.some((r) => r.where));
    $('lines').tBodies[0].replaceChildren(
      ...rows.map((r) => {
        const tr = document.createElement('tr');
        if (r.left <= 0) tr.className = 'done';
        else if (r === next) tr.className = 'next';
        for (const [text, kind] of [[r.sku, ''], [r.where || '', 'where'], [r.done + '/' + r.of, 'num'], [r.left, 'num']]) {
          const td = document.createElement('td');
          td.textContent = String(text);
          td.className = kind;
          tr.append(td);
        }
        return tr;
      }),
    );
    return next;
  }

  async function pickList(task) {
    const r = await api('GET', '/v1/picking/' + business + '/waves/' + task.wave_id);
    if (r.status !== 200) return null;
    return r.body.data.pick_lists
      .filter((l) => task.order_id == null || l.order_id === task.order_id)
      .flatMap((l) => l.lines)
      .map((l) => ({ sku: l.sku, where: l.location, done: l.picked, of: l.quantity, left: l.remaining }));
  }

  async function renderTask() {
    const task = view.task;
    let title = 'No task';
    let next = 'Waiting for a task to be set for this station';
    let rows = [];
    let verb = 'do';
    if (task.task === 'packing') {
      const p = view.packing;
      verb = 'pack';
      title = 'Packing order ' + task.order_id;
      rows = p ? p.lines.map((l) => ({ sku: l.sku, done: l.scanned, of: l.ordered, left: l.ordered - l.scanned })) : [];
      const line = rows.find((r) => r.left > 0);
      const failed = shown && shown.report.status >= 400;
      if (line) next = 'Scan next: ' + line.sku + ' (' + line.left + ' more)';
      else if (failed) next = 'Not packed: fix it, then Retry pack or Release order';
      else next = 'Put the package on the scale';
      if (p && p.expected_weight_g != null) title += ' · expect ' + p.expected_weight_g + ' g';
    } else if (task.task === 'picking') {
      verb = 'pick';
      title = 'Picking wave ' + task.wave_id + (task.order_id != null ? ', order ' + task.order_id : '');
      const list = await pickList(task);
      if (list === null) {
        next = 'Wave ' + task.wave_id + ' cannot be read';
      } else {
        rows = list;
        const line = rows.find((r) => r.left > 0);
        next = line ? 'Pick next: ' + line.sku + (line.where ? ' at ' + line.where : '') + ' (' + line.left + ' more)' : 'All picked';
      }
    } else if (task.task === 'receiving') {
      verb = 'receive';
      title = 'Receiving inbound order ' + task.inbound_id + (task.location ? ' into ' + task.location : '');
      next = 'Scan each unit received';
    }
    $('task-title').textContent = title;
    $('task-next').textContent = next;
    renderLines(verb, rows);
    renderActions();
  }

  // Retry: the same pack again, from the scans the station kept (offered
  // once every unit is scanned: the pack started by itself and failed).
  // Release: the task given up, so the station is never stuck on it.
  function renderActions() {
    const task = view ? view.task : { task: 'idle' };
    const packing = task.task === 'packing' ? view.packing : null;
    $('retry').hidden = !(packing && packing.remaining === 0);
    const what = { packing: 'order', picking: 'wave', receiving: 'inbound order' }[task.task];
    $('release').hidden = !what;
    if (what) $('release').textContent = 'Release ' + what;
    $('task-actions').hidden = $('retry').hidden && $('release').hidden;
  }

  function renderPrinter() {
    const p = view.printer;
    if (!p) {
      setState('printer', 'none', 'none');
      return;
    }
    const jobs = p.queued ? ' · ' + p.queued + ' queued' : '';
    const d = p.device || {};
    if (p.unbound) setState('printer', 'bad', p.name + ': ' + p.unbound);
    else if (d.state === 'ready') setState('printer', 'good', p.name + ' ready' + jobs);
    else if (d.state === 'busy') setState('printer', 'good', p.name + ' printing' + jobs);
    else if (d.state === 'faulted') setState('printer', 'bad', p.name + ': ' + (d.problems || []).map(words).join(', ') + jobs);
    else if (d.state === 'unreachable') setState('printer', 'bad', p.name + ' unreachable' + jobs);
    else setState('printer', 'warn', p.name + ' ' + words(d.state || 'unknown') + jobs);
  }

  // Reads the station again; calls that come meanwhile make one more read.
  function refreshStation() {
    if (refreshing) {
      refreshAgain = true;
      return refreshing;
    }
    refreshing = (async () => {
      do {
        refreshAgain = false;
        const r = await api('GET', '/v1/edge/stations');
        const found = r.status === 200 ? r.body.data.find((s) => s.name === station) : null;
        if (!found) {
          $('task-title').textContent = 'Station ' + station + ' is not configured at this edge any more';
          continue;
        }
        const first = view === null;
        view = found;
        if (first && view.last) showResult(view.last, null, null, false, true);
        else paintResult();
        renderPrinter();
        if (!view.scale) $('scale').dataset.state = 'none';
        else if (first) {
          $('scale-id').textContent = view.scale.id;
          showWeight(view.scale);
        }
        await renderTask();
      } while (refreshAgain && running);
    })()
      .catch(report)
      .finally(() => {
        refreshing = null;
      });
    return refreshing;
  }

  function report(e) {
    if (!(e instanceof Unauthorized)) console.warn('station page:', e);
  }

  // --- The cloud link and the scale, polled.

  const current = (gen) => running && gen === generation;

  async function pollStates(gen) {
    if (!current(gen)) return;
    try {
      const r = await api('GET', '/v1/edge/status');
      if (r.status === 200) {
        const s = r.body.data;
        if (s.connected) setState('cloud', 'good', 'online' + (s.depth > 0 ? ' · ' + s.depth + ' to send' : ''));
        else setState('cloud', 'warn', 'offline' + (s.connected_since ? ' since ' + clock(s.connected_since) : '') + (s.depth > 0 ? ' · ' + s.depth + ' waiting' : ''));
        showDisk(s.storage);
      } else {
        setState('cloud', 'bad', 'status ' + r.status);
      }
      await refreshStation();
    } catch (e) {
      if (e instanceof Unauthorized) return;
      setState('cloud', 'bad', 'edge unreachable');
    }
    setTimeout(() => pollStates(gen), STATES_EVERY_MS);
  }

  // Shown only when the box runs out of room: a full disk refuses every scan.
  function showDisk(storage) {
    const shown = storage && storage.state !== 'ok';
    $('disk').hidden = !shown;
    if (!shown) return;
    if (storage.state === 'full') setState('disk', 'bad', 'full: nothing is saved');
    else setState('disk', 'warn', 'low: ' + Math.floor(storage.free_bytes / 1048576) + ' MiB free');
  }

  async function pollWeight(gen) {
    if (!current(gen)) return;
    const scale = view && view.scale;
    if (scale && !document.hidden) {
      try {
        const r = await api('GET', '/v1/edge/scales/' + encodeURIComponent(scale.id) + '/weight');
        showWeight(r.status === 200 ? r.body.data : { state: 'fault', fault: (r.body && r.body.message) || 'status ' + r.status });
      } catch (e) {
        if (e instanceof Unauthorized) return;
        showWeight({ state: 'fault', fault: 'edge unreachable' });
      }
    }
    setTimeout(() => pollWeight(gen), WEIGHT_EVERY_MS);
  }

  function showWeight(w) {
    const el = $('scale');
    el.dataset.state = w.state;
    if (w.state === 'fault') {
      $('weight').textContent = w.fault || 'fault';
      $('weight-note').textContent = '';
    } else if (w.weight != null) {
      $('weight').textContent = w.weight + ' ' + (w.unit || '');
      $('weight-note').textContent = w.stable ? 'stable' : 'settling…';
    } else {
      $('weight').textContent = '–';
      $('weight-note').textContent = words(w.state);
    }
  }

  // --- The live stream of the station's events.

  async function connect(gen) {
    if (!current(gen)) return;
    setState('live', 'warn', 'connecting');
    let ticket;
    try {
      const r = await api('POST', '/v1/events/' + business + '/tickets');
      if (r.status !== 200) throw new Error('ticket: status ' + r.status);
      ticket = r.body.data.ticket;
    } catch (e) {
      if (e instanceof Unauthorized) return;
      retry(gen);
      return;
    }
    const q = new URLSearchParams({ ticket, kinds: 'station.scanned', station });
    if (after !== null) q.set('after', String(after));
    const url = location.protocol.replace('http', 'ws') + '//' + location.host + base + '/v1/events/' + business + '/stream?' + q;
    const ws = new WebSocket(url);
    socket = ws;
    ws.onopen = () => {
      backoff = BACKOFF_FIRST_MS;
      setState('live', 'good', 'connected');
      // Whatever happened before the stream began is in the station's state.
      refreshStation();
    };
    ws.onmessage = (m) => {
      let frame;
      try {
        frame = JSON.parse(m.data);
      } catch (_) {
        return;
      }
      after = frame.next;
      for (const e of frame.events) {
        const p = e.payload;
        if (e.kind !== 'station.scanned' || p.station !== station) continue;
        showResult(p, p.input, e.at, true);
        if (view && p.result && p.result.packing) {
          view.packing = p.result.packing;
          view.task = p.task || view.task;
          renderTask().catch(report);
        }
      }
      refreshStation();
    };
    ws.onclose = (e) => {
      if (socket !== ws) return;
      socket = null;
      if (!current(gen)) return;
      setState('live', 'bad', 'disconnected' + (e.reason ? ': ' + e.reason : ''));
      retry(gen);
    };
  }

  function retry(gen) {
    const wait = backoff;
    backoff = Math.min(backoff * 2, BACKOFF_MAX_MS);
    setState('live', 'bad', 'reconnecting in ' + Math.round(wait / 1000) + ' s');
    setTimeout(() => connect(gen), wait);
  }

  // --- Scans typed here.

  // 409 with this: the first try of the scan is still under way at the
  // edge; asked again, the edge answers its answer.
  function underWay(r) {
    return r.status === 409 && r.body && Array.isArray(r.body.errors) &&
      r.body.errors.some((e) => e.status === 'idempotency_key_in_use');
  }

  // Sends one request from the floor (a typed scan, a retried pack, a
  // release) and shows the station's answer. One key for the request and
  // its retries: a retry of one the edge took but whose answer was lost
  // answers that answer, and it is applied once.
  async function send(what, body, input) {
    const idempotencyKey = newKey();
    const path = '/v1/edge/stations/' + encodeURIComponent(station) + '/' + what;
    for (let attempt = 1; ; attempt++) {
      let r;
      try {
        r = await api('POST', path, body, idempotencyKey);
      } catch (e) {
        if (e instanceof Unauthorized) return;
        if (attempt < SCAN_TRIES) {
          await sleep(BACKOFF_FIRST_MS * attempt);
          continue;
        }
        showResult({ status: 503, message: 'The edge did not answer: try again', errors: [] }, input, null, true);
        return;
      }
      if (underWay(r) && attempt < SCAN_TRIES) {
        await sleep(BACKOFF_FIRST_MS * attempt);
        continue;
      }
      // A refusal is the API's error body, shown as it is sent.
      const answer = r.status === 200 ? r.body.data : { status: r.status, message: (r.body && r.body.message) || 'status ' + r.status, errors: (r.body && r.body.errors) || [] };
      // The stream shows it too; shown here at once in case it is down.
      showResult(answer, input, new Date().toISOString(), !socket);
      refreshStation();
      return;
    }
  }

  const submitScan = (code) => send('scan', { code }, { scan: code, scanner: 'keyboard' });

  // A button pressed once sends once: it waits for the answer.
  async function press(button, what, input) {
    if (button.disabled) return;
    button.disabled = true;
    try {
      await send(what, undefined, input);
    } finally {
      button.disabled = false;
    }
  }

  function keepFocus() {
    if (!$('screen').hidden && document.activeElement !== $('scan')) $('scan').focus();
  }

  // --- Start.

  async function start() {
    $('key-form').hidden = true;
    $('screen').hidden = false;
    $('scan').focus();
    running = true;
    const gen = ++generation;
    try {
      const r = await api('GET', '/v1/edge/status');
      if (r.status !== 200) throw new Error('status ' + r.status);
      business = r.body.data.business_id;
    } catch (e) {
      if (e instanceof Unauthorized) return;
      setState('cloud', 'bad', 'edge unreachable');
      setTimeout(() => current(gen) && start(), BACKOFF_MAX_MS / 2);
      return;
    }
    await refreshStation();
    pollStates(gen);
    pollWeight(gen);
    connect(gen);
  }

  $('scan-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const code = $('scan').value.trim();
    $('scan').value = '';
    if (code) submitScan(code);
  });
  $('key-form').addEventListener('submit', (e) => {
    e.preventDefault();
    const value = $('key').value.trim();
    if (!value) return;
    key = value;
    store(value);
    $('key-why').dataset.state = '';
    start();
  });
  $('retry').addEventListener('click', () => press($('retry'), 'pack', { pack: {} }));
  $('release').addEventListener('click', () => press($('release'), 'release', { release: {} }));
  $('forget').addEventListener('click', () => {
    store(null);
    askForKey('The key is forgotten: give one to go on.');
  });
  // A scanner types wherever the focus is: keep it on the scan input.
  document.addEventListener('click', keepFocus);
  window.addEventListener('focus', keepFocus);
  $('scan').addEventListener('blur', () => setTimeout(keepFocus, 200));

  key = takeKey();
  if (key) start();
  else askForKey(null);
})();
