(() => {
  "use strict";
  // Refreshes the server-rendered dashboard in place from the JSON
  // endpoints beside it (relative URLs, so the page works under any prefix).
  // Markup comes from the <template> elements the server rendered; this
  // script only clones them and sets text, never HTML.
  const f = (key, root) => (root || document).querySelector('[data-f="' + key + '"]');
  const cfg = JSON.parse(f("config").textContent);
  const names = new Map(Object.entries(cfg.names || {}));
  const states = cfg.states, levels = cfg.levels;
  const refresh = Math.max(100, cfg.refresh_ms || 5000);
  const none = "—";
  // The pictures: how far back the state bands go, the most events asked
  // for them, how many refreshes a chart shows. SVG elements are made in
  // the namespace of the card template's own <svg>.
  const bandMS = cfg.band_ms || 3600000, bandLimit = cfg.band_limit || 1000, bandPages = cfg.band_pages || 1;
  const chartPoints = Math.max(2, cfg.chart_points || 60);
  const svgNS = f("tpl-card").content.querySelector("svg").namespaceURI;
  // The page of breakers shown (from 1) and the search text: the server
  // sends one page of them, those that are not ok first.
  let page = cfg.page || 1, query = cfg.q || "";

  // displayName mirrors httphealth's: the registered name, else the part
  // after the last ":" (fallback:sina → sina), else the part of that before
  // its first "_" (tencent_kline → tencent), else the bare name.
  function displayName(src) {
    if (names.has(src)) return names.get(src);
    // A family's key: the family's display name with the key; each
    // prefix is looked at once.
    for (let i = src.lastIndexOf("/"); i > 0; i = src.lastIndexOf("/", i - 1)) {
      const d = ownDisplayName(src.slice(0, i));
      if (d !== undefined) return d + "/" + src.slice(i + 1);
    }
    const own = ownDisplayName(src);
    return own !== undefined ? own : src.slice(src.lastIndexOf(":") + 1);
  }

  // ownDisplayName is the display name of src by its own rules (its name,
  // after any "prefix:", or before its first "_"); undefined when none.
  function ownDisplayName(src) {
    if (names.has(src)) return names.get(src);
    const base = src.slice(src.lastIndexOf(":") + 1);
    if (names.has(base)) return names.get(base);
    const i = base.indexOf("_");
    if (i > 0 && names.has(base.slice(0, i))) return names.get(base.slice(0, i));
    return undefined;
  }

  function fmtTime(iso) {
    const t = iso ? Date.parse(iso) : NaN;
    if (isNaN(t)) return none;
    return new Date(t).toISOString().slice(0, 19).replace("T", " ") + " UTC";
  }

  // fmtLeft mirrors httphealth's formatLeft: whole seconds, rounded up.
  function fmtLeft(ms) {
    const s = Math.ceil(ms / 1000);
    if (s <= 0) return "due now";
    if (s < 60) return "in " + s + " s";
    if (s < 3600) return "in " + Math.floor(s / 60) + " min " + (s % 60) + " s";
    return "in " + Math.floor(s / 3600) + " h " + Math.floor((s % 3600) / 60) + " min";
  }

  // fmtSpan says how long a span of time is: "45 s", "3 min 10 s", "5 min", "1 h 5 min".
  function fmtSpan(ms) {
    const s = Math.max(0, Math.round(ms / 1000));
    if (s < 60) return s + " s";
    if (s < 3600) return Math.floor(s / 60) + " min" + (s % 60 ? " " + (s % 60) + " s" : "");
    return Math.floor(s / 3600) + " h" + (s % 3600 >= 60 ? " " + Math.floor((s % 3600) / 60) + " min" : "");
  }

  const fmtClock = (ms) => new Date(ms).toISOString().slice(11, 19);

  // pct mirrors httphealth's percent: a fraction as a whole percentage.
  const pct = (x) => Math.round((Number(x) || 0) * 100) + "%";

  function setText(root, key, text) {
    const el = f(key, root);
    if (el && el.textContent !== text) el.textContent = text;
    return el;
  }

  function setState(root, key, name) {
    const st = states[name] || { word: name, symbol: "?", level: "down" };
    f(key, root).dataset.level = st.level;
    setText(root, key + "-sym", st.symbol);
    setText(root, key + "-word", st.word);
    return st;
  }

  function setRow(card, key, text, show) {
    setText(card, key, text);
    card.querySelector('[data-row="' + key + '"]').hidden = !show;
  }

  // The clock of the server, from the last answer's X-Server-Time (or Date)
  // header, so that the countdown does not depend on the browser's clock.
  let serverNow = Date.now(), fetchedAt = performance.now();
  const now = () => serverNow + (performance.now() - fetchedAt);

  function nextProbeText(b) {
    if (b.state === "OPEN") return b.next_probe ? fmtLeft(Date.parse(b.next_probe) - now()) : "due now";
    if (b.state === "HALF_OPEN") return "probing now";
    if (b.state === "ISOLATED") return "none (isolated until resumed)";
    if (b.state === "BYPASSED") return "none (bypassed until resumed)";
    return "none (closed)";
  }

  function fillCard(card, b) {
    const display = displayName(b.name);
    card.dataset.name = b.name;
    card.dataset.state = b.state;
    card.dataset.nextProbe = b.next_probe || "";
    setText(card, "display", display);
    setText(card, "name", b.name).hidden = display === b.name;
    card.dataset.level = setState(card, "state", b.state).level;
    const half = b.state === "HALF_OPEN", counted = !!b.counted;
    setRow(card, "next", nextProbeText(b), true);
    setRow(card, "consecutive", String(b.consecutive_failures || 0), true);
    setRow(card, "failures", String(b.failures || 0), true);
    setRow(card, "probe_successes", String(b.consecutive_successes || 0), half);
    setRow(card, "probes", String(b.probes_in_flight || 0), half);
    setRow(card, "changes", String(b.state_changes || 0), true);
    setRow(card, "calls", String(b.calls || 0), counted);
    setRow(card, "successes", String(b.successes || 0), counted);
    setRow(card, "rejections", String(b.rejections || 0), true);
    setRow(card, "ignored", String(b.ignored || 0), true);
    setRow(card, "rate_limited", String(b.rate_limited || 0), true);
    // The rows of loadRows in httphealth: windows, in flight, throttle.
    const win = !!b.window;
    setRow(card, "window", b.window || "", win);
    setRow(card, "window_calls", (b.window_calls || 0) + " (" + (b.window_failures || 0) + " failed, " +
      (b.window_slow || 0) + " slow)", win);
    setRow(card, "failure_rate", pct(b.failure_rate) + " (trips at " + pct(b.failure_rate_threshold) + ")",
      win && !!b.failure_rate_threshold);
    setRow(card, "slow_rate", pct(b.slow_rate) + " (trips at " + pct(b.slow_rate_threshold) + ")",
      win && !!b.slow_rate_threshold);
    setRow(card, "in_flight", (b.in_flight || 0) + (b.concurrency ? " of " + b.concurrency : ""),
      !!(b.in_flight || b.concurrency));
    setRow(card, "bulkhead_full", String(b.bulkhead_full || 0), !!b.bulkhead_full);
    setRow(card, "throttle", pct(b.throttle_probability) + " of calls",
      !!(b.throttle || b.throttle_probability || b.throttled));
    setRow(card, "throttled", String(b.throttled || 0), !!b.throttled);
    // opened_at is in the JSON while the breaker is OPEN or HALF_OPEN only.
    setRow(card, "opened", fmtTime(b.opened_at), b.state === "OPEN" || b.state === "HALF_OPEN");
    setRow(card, "last_failure", fmtTime(b.last_failure), true);
  }

  // Families of per-key breakers: one row each. An expanded row shows a
  // page of its keys, asked for at each refresh with ?family=NAME, paged
  // and searchable as the breakers are.
  const famViews = new Map(); // name of an expanded family → {page, q}

  // countsText mirrors httphealth's.
  const countsText = (c) => (c && c.down || 0) + " down, " + (c && c.degraded || 0) + " degraded, " +
    (c && c.ok || 0) + " ok";

  function fillFamily(li, fam) {
    const display = displayName(fam.name);
    li.dataset.family = fam.name;
    li.dataset.state = fam.state;
    setText(li, "display", display);
    setText(li, "name", fam.name).hidden = display === fam.name;
    li.dataset.level = setState(li, "state", fam.state).level;
    setRow(li, "keys", (fam.keys || 0) + " of " + (fam.limit || 0), true);
    setRow(li, "levels", countsText(fam.counts), true);
    setRow(li, "open", (fam.open || 0) + (fam.maxopen_percent ? " (maxopen " + fam.maxopen_percent + "%)" : ""), true);
    setRow(li, "dropped", String(fam.dropped || 0), true);
    setRow(li, "kept_closed", String(fam.kept_closed || 0), !!(fam.maxopen_percent || fam.kept_closed));
    const btn = f("expand", li), open = famViews.has(fam.name);
    btn.disabled = false;
    btn.setAttribute("aria-expanded", String(open));
    f("keylist", li).hidden = !open;
  }

  // renderKeys shows the page of a family's keys that h, an answer of
  // datasources?family=NAME, holds.
  function renderKeys(li, h) {
    const view = famViews.get(h.family);
    if (view) view.page = h.page;
    const body = f("key-rows", li), tpl = f("tpl-key").content.firstElementChild;
    const prefix = h.family + "/";
    const old = new Map();
    for (const tr of body.children) old.set(tr.dataset.name, tr);
    h.breakers.forEach((b, i) => {
      let tr = old.get(b.name);
      old.delete(b.name);
      if (!tr) tr = tpl.cloneNode(true);
      tr.dataset.name = b.name;
      tr.dataset.state = b.state;
      tr.dataset.nextProbe = b.next_probe || "";
      const key = b.name.startsWith(prefix) ? b.name.slice(prefix.length) : b.name;
      setText(tr, "key", key);
      for (const btn of tr.querySelectorAll("[data-act]")) btn.setAttribute("aria-label", btn.textContent + " key " + (key || "(empty)"));
      tr.dataset.level = setState(tr, "state", b.state).level;
      setText(tr, "key-consecutive", String(b.consecutive_failures || 0));
      setText(tr, "key-failures", String(b.failures || 0));
      setText(tr, "key-probe", nextProbeText(b));
      if (body.children[i] !== tr) body.insertBefore(tr, body.children[i] || null);
    });
    for (const tr of old.values()) tr.remove();
    setText(li, "key-page-text", pageText(h));
    f("key-prev", li).disabled = h.page <= 1;
    f("key-next", li).disabled = h.page >= h.pages;
    const empty = f("keys-empty", li);
    setText(li, "keys-empty", h.total ? "No key matches “" + h.q + "”." : "No live keys.");
    empty.hidden = h.breakers.length > 0;
  }

  function renderFamilies(fams, keyPages) {
    const list = f("families"), tpl = f("tpl-family").content.firstElementChild;
    const old = new Map();
    for (const li of list.children) old.set(li.dataset.family, li);
    fams.forEach((fam, i) => {
      let li = old.get(fam.name);
      old.delete(fam.name);
      if (!li) li = tpl.cloneNode(true);
      fillFamily(li, fam);
      const kp = keyPages.get(fam.name);
      if (kp) renderKeys(li, kp);
      if (list.children[i] !== li) list.insertBefore(li, list.children[i] || null);
    });
    for (const li of old.values()) li.remove();
    list.hidden = fams.length === 0;
  }

  // fetchKeys asks for the page of each expanded family's keys; a family
  // gone from the registry is collapsed.
  async function fetchKeys(signal) {
    const out = new Map();
    await Promise.all([...famViews].map(async ([name, view]) => {
      const params = new URLSearchParams({ family: name, page: String(view.page), q: view.q });
      try {
        out.set(name, (await getJSON("datasources", signal, params)).body);
      } catch (err) {
        if (err && err.status === 404) famViews.delete(name);
        else throw err;
      }
    }));
    return out;
  }

  function svg(name, attrs) {
    const el = document.createElementNS(svgNS, name);
    for (const [k, v] of Object.entries(attrs)) el.setAttribute(k, String(v));
    return el;
  }

  // State bands. The height says the state as well as the colour does:
  // OPEN full, HALF_OPEN two thirds, CLOSED a third; UNKNOWN a thin line.
  // An operator's ISOLATED is as tall as OPEN, BYPASSED nearly so (their
  // colours are paler).
  const bandShape = { OPEN: [0, 12], ISOLATED: [0, 12], BYPASSED: [2, 10], HALF_OPEN: [4, 8], CLOSED: [8, 4], UNKNOWN: [5, 2] };

  // drawBand draws the states of breaker b over the last bandMS, from its
  // events in that span (newest first) and its current state. cut > 0: the
  // answer was cut there, and the band does not say what came before.
  function drawBand(card, b, evs, cut, px, to) {
    const from = to - bandMS;
    const list = evs.slice().reverse(); // oldest first
    const clamp = (iso) => Math.min(to, Math.max(from, Date.parse(iso) || from));
    const marks = [];
    if (cut > from) {
      marks.push({ state: "UNKNOWN", at: from,
        reason: "the log holds more events than the " + bandPages * bandLimit + " the bands read" });
    }
    marks.push({ state: list.length ? list[0].from_state : b.state, at: Math.max(from, Math.min(cut, to)), reason: "" });
    for (const e of list) marks.push({ state: e.to_state, at: clamp(e.timestamp), reason: e.reason, moved: true });
    const minW = (bandMS * 3) / px; // 3 px: a flip of a few seconds still shows
    let opened = 0, openMS = 0, isolatedMS = 0;
    const el = f("band", card);
    // The spans are drawn into the elements already there, so that the one
    // under a still pointer stays in the document: a pointer leaving an
    // element that was removed gets no pointerout.
    const old = [...el.children];
    const rects = marks.map((m, i) => {
      const end = i + 1 < marks.length ? marks[i + 1].at : to;
      const w = Math.max(end - m.at, minW), x = Math.min(m.at - from, bandMS - w);
      const [y, height] = bandShape[m.state] || bandShape.OPEN;
      const word = m.state === "UNKNOWN" ? "Not shown" : (states[m.state] || { word: m.state }).word;
      // An opening is a move into OPEN: OPEN → OPEN (a reconfigured
      // breaker keeps its state) opens nothing.
      if (m.state === "OPEN") { openMS += end - m.at; if (m.moved && marks[i - 1].state !== "OPEN") opened++; }
      if (m.state === "ISOLATED") isolatedMS += end - m.at;
      const r = old[i] || svg("rect", {});
      for (const [k, v] of Object.entries({ class: "seg", "data-state": m.state, x, y, width: w, height })) r.setAttribute(k, String(v));
      const when = m.moved ? fmtClock(m.at) + "–" + (end === to ? "now" : fmtClock(end)) + " UTC"
        : "until " + (end === to ? "now" : fmtClock(end) + " UTC");
      const t = r.firstElementChild || r.appendChild(svg("title", {}));
      t.textContent = word + ", " + when + " (" + fmtSpan(end - m.at) + ")" + (m.reason ? ": " + m.reason : "");
      return r;
    });
    for (const r of old.slice(rects.length)) r.remove();
    for (const r of rects) if (r.parentNode !== el) el.append(r);
    el.dataset.spans = String(rects.length);
    let text = opened ? "opened " + opened + "×, open " + fmtSpan(openMS) + " in all"
      : openMS ? "open " + fmtSpan(openMS) : "";
    // An operator's ISOLATED cuts the source off as OPEN does: no outage
    // it is not.
    if (isolatedMS) text += (text ? "; " : "") + "isolated " + fmtSpan(isolatedMS);
    if (!text) text = marks.length > 1 ? "no outage" : "no change";
    el.setAttribute("aria-label", "State over the last hour: " + text + ".");
    el.dataset.summary = text;
    // The caption shows the span under the pointer (a tap, on a phone)
    // until the pointer leaves the band.
    const shown = el.dataset.pointed ? rects[Number(el.dataset.pointed)] : null;
    setText(card, "band-text", shown ? shown.textContent : text);
    f("band-fig", card).hidden = false;
  }

  // Charts: the page keeps the counters of its breakers at each of the
  // last chartPoints refreshes and draws what changed between two.
  const samples = new Map(); // breaker name → [{calls, failures, refusals}], oldest first

  function record(breakers) {
    const seen = new Set();
    for (const b of breakers) {
      seen.add(b.name);
      const failures = b.failures || 0;
      const refusals = (b.rejections || 0) + (b.rate_limited || 0) + (b.throttled || 0) + (b.bulkhead_full || 0);
      let hist = samples.get(b.name);
      if (!hist) samples.set(b.name, (hist = []));
      hist.push({ calls: b.counted ? b.calls || 0 : failures + refusals, failures, refusals });
      if (hist.length > chartPoints + 1) hist.splice(0, hist.length - chartPoints - 1);
    }
    for (const name of [...samples.keys()]) if (!seen.has(name)) samples.delete(name);
  }

  const series = ["calls", "failures", "refusals"];

  function drawChart(card, b) {
    const hist = samples.get(b.name) || [];
    const pts = [];
    for (let i = 1; i < hist.length; i++) {
      const p = {};
      // A counter that went down was reset (Breaker.Reset): it counts from 0.
      for (const k of series) p[k] = hist[i][k] >= hist[i - 1][k] ? hist[i][k] - hist[i - 1][k] : hist[i][k];
      pts.push(p);
    }
    let top = 0;
    const sum = { calls: 0, failures: 0, refusals: 0 };
    for (const p of pts) for (const k of series) { top = Math.max(top, p[k]); sum[k] += p[k]; }
    const peak = Math.max(1, top);
    const el = f("chart", card), last = chartPoints - 1;
    el.setAttribute("viewBox", "0 0 " + last + " 100");
    for (const line of el.querySelectorAll("polyline")) {
      const k = line.dataset.series;
      line.setAttribute("points", pts.map((p, i) =>
        (last - (pts.length - 1 - i)) + "," + (97 - (p[k] / peak) * 94).toFixed(1)).join(" "));
    }
    el.dataset.points = String(pts.length);
    el.dataset.peak = String(peak);
    el.setAttribute("aria-label", "Over the last " + pts.length + " refreshes: " + sum.calls + " calls, " +
      sum.failures + " failures, " + sum.refusals + " refusals.");
    setText(card, "chart-from", "−" + fmtSpan(chartPoints * refresh));
    setText(card, "chart-text", (!pts.length ? "collecting…" : top ? "peak " + top + " per refresh" : "no calls") +
      (b.counted ? "" : "; calls not counted: the calls line is failures + refusals"));
    f("chart-fig", card).hidden = false;
  }

  // Pointing at a band (hover, or a tap on a phone) shows the text of the
  // span nearest the pointer in the band's caption, for screens where a
  // tooltip never shows and spans a few pixels wide that no finger hits.
  function pointBand(e) {
    const band = e.target instanceof Element ? e.target.closest('[data-f="band"]') : null;
    if (!band || !band.children.length) return;
    const box = band.getBoundingClientRect();
    const at = ((e.clientX - box.left) / box.width) * bandMS;
    let best = 0, dist = Infinity;
    [...band.children].forEach((r, i) => {
      const x = Number(r.getAttribute("x")), w = Number(r.getAttribute("width"));
      const d = at < x ? x - at : at > x + w ? at - x - w : 0;
      if (d <= dist) { best = i; dist = d; } // the later of two on top of each other
    });
    if (band.dataset.pointed === String(best)) return;
    band.dataset.pointed = String(best);
    setText(band.closest(".card"), "band-text", band.children[best].textContent);
  }

  function unpoint(band) {
    delete band.dataset.pointed;
    setText(band.closest(".card"), "band-text", band.dataset.summary || "");
  }

  // A mouse leaving the band brings its summary back. A finger leaves as
  // soon as it lifts: its span stays shown until a tap elsewhere.
  function leaveBand(e) {
    const band = e.target instanceof Element ? e.target.closest('[data-f="band"]') : null;
    if (band && e.pointerType !== "touch" && !band.contains(e.relatedTarget)) unpoint(band);
  }

  // A mouse moving anywhere but over a band brings the summary of a band
  // still pointed at back, should its pointerout have been lost (the
  // band's card moved, or the span under the pointer went away).
  function moveElsewhere(e) {
    if (e.pointerType === "touch") return;
    const here = e.target instanceof Element ? e.target.closest('[data-f="band"]') : null;
    for (const band of document.querySelectorAll('[data-f="band"][data-pointed]')) if (band !== here) unpoint(band);
  }

  function tapElsewhere(e) {
    const here = e.target instanceof Element ? e.target.closest('[data-f="band"]') : null;
    for (const band of document.querySelectorAll('[data-f="band"][data-pointed]')) if (band !== here) unpoint(band);
  }

  // renderFleet mirrors httphealth's fleetText.
  function renderFleet(fl) {
    const el = f("fleet");
    if (!fl || typeof fl !== "object") { el.hidden = true; return; }
    const up = fl.redis === "ok", n = Number(fl.members) || 0;
    // Another member with this process's origin: each drops the other's
    // news as its own (redisstate's duplicate_origin).
    const twin = typeof fl.duplicate_origin === "string" ? fl.duplicate_origin : "";
    el.dataset.level = !up ? "down" : twin ? "degraded" : "ok";
    setText(el, "fleet-sym", !up ? "✕" : twin ? "⚠" : "✓");
    // While Redis has been away for longer than a member's two seconds,
    // members is 0: no count is known, so none is shown.
    const count = !up && n === 0 ? "" : ", " + (n === 1 ? "1 member" : n + " members");
    setText(el, "fleet-word", "Fleet: Redis " + (up ? "ok" : "down") + count +
      (up ? "" : "; each process on its own breakers") +
      (twin ? "; another member is also " + twin + ": neither follows the other's trips (give each its own WithOrigin)" : ""));
    el.hidden = false;
  }

  // renderInjecting mirrors httphealth's injectingText.
  function renderInjecting(names) {
    const el = f("injecting");
    if (!Array.isArray(names) || names.length === 0) { el.hidden = true; return; }
    setText(el, "injecting-word", "Fault injection on: " + names.join(", "));
    el.hidden = false;
  }

  // renderUnmatched names the settings that name no breaker, family or
  // limiter (unmatched_settings). The names come from environment
  // variables and code: set as text, like everything else.
  function renderUnmatched(names) {
    const el = f("unmatched");
    if (!Array.isArray(names) || names.length === 0) { el.hidden = true; return; }
    setText(el, "unmatched-names", names.map(String).join(", "));
    el.hidden = false;
  }

  function announce(text) {
    const el = f("announce");
    el.textContent = "";
    // A new text node is announced even when the words repeat.
    window.setTimeout(() => { el.textContent = text; }, 50);
  }

  // summaryText and pageText mirror httphealth's.
  function summaryText(h) {
    if (!h.total) return "";
    const c = h.counts || {};
    let s = (h.total === 1 ? "1 source" : h.total + " sources") + ": " + (c.down || 0) + " down, " +
      (c.degraded || 0) + " degraded, " + (c.ok || 0) + " ok. Those not ok come first.";
    if (h.dropped_events) s += " " + h.dropped_events + " events not logged nor hooked (event queue full).";
    return s;
  }

  function pageText(h) {
    let s = "Page " + h.page + " of " + h.pages;
    const n = h.breakers.length;
    if (n > 0) {
      const from = (h.page - 1) * h.per_page + 1;
      s += ": " + from + "–" + (from + n - 1) + " of " + h.matched;
    }
    if (h.q) s += " matching “" + h.q + "”";
    return s + ".";
  }

  function renderPager(h) {
    page = h.page;
    const summary = setText(document, "summary", summaryText(h));
    summary.hidden = !h.total;
    f("pager").hidden = !(h.pages > 1 || h.q);
    setText(document, "page-text", pageText(h));
    f("prev").disabled = h.page <= 1;
    f("next").disabled = h.page >= h.pages;
    const empty = f("cards-empty");
    setText(document, "cards-empty", h.total ? "No source matches “" + h.q + "”." : "No breakers registered yet.");
    empty.hidden = h.breakers.length > 0 || (h.families || []).length > 0;
    // The address shows the view, so that a reload or a shared link opens it.
    const params = new URLSearchParams();
    if (h.page > 1) params.set("page", String(h.page));
    if (h.q) params.set("q", h.q);
    const want = location.pathname + (params.size ? "?" + params : "");
    if (location.pathname + location.search !== want) history.replaceState(null, "", want);
  }

  function renderHealth(h, band, keyPages) {
    const lv = levels[h.status] || levels.down;
    const overall = f("overall");
    overall.dataset.level = h.status;
    setText(overall, "overall-sym", lv.symbol);
    setText(overall, "overall-word", lv.word);
    document.title = lv.symbol + " " + cfg.title;

    const list = f("cards"), tpl = f("tpl-card").content.firstElementChild;
    const old = new Map();
    for (const li of list.children) old.set(li.dataset.name, li);
    const changed = [];
    record(h.breakers);
    // The bands' width in pixels, read once (every card is as wide).
    const first = list.querySelector('[data-f="band"]');
    const px = Math.max(100, (first && first.getBoundingClientRect().width) || 300);
    h.breakers.forEach((b, i) => {
      let card = old.get(b.name);
      old.delete(b.name);
      if (!card) card = tpl.cloneNode(true);
      else if (card.dataset.state !== b.state) changed.push(displayName(b.name) + ": " + (states[b.state] || {}).word);
      fillCard(card, b);
      drawBand(card, b, band.byName.get(b.name) || [], band.cut, px, band.now);
      drawChart(card, b);
      if (list.children[i] !== card) list.insertBefore(card, list.children[i] || null);
    });
    for (const li of old.values()) li.remove();
    f("legend").hidden = h.breakers.length === 0;
    renderFamilies(h.families || [], keyPages);
    renderFleet(h.fleet);
    renderInjecting(h.injecting);
    renderUnmatched(h.unmatched_settings);
    renderPager(h);
    if (changed.length) announce(changed.join(". ") + ".");
  }

  function renderEvents(evs) {
    const tpl = f("tpl-event").content.firstElementChild;
    const items = evs.map((e) => {
      const li = tpl.cloneNode(true);
      const t = f("time", li);
      t.dateTime = e.timestamp;
      t.textContent = fmtTime(e.timestamp);
      const display = displayName(e.source);
      setText(li, "display", display);
      setText(li, "source", e.source).hidden = display === e.source;
      setState(li, "from", e.from_state);
      li.dataset.level = setState(li, "to", e.to_state).level;
      setText(li, "reason", e.reason);
      return li;
    });
    f("events").replaceChildren(...items);
    f("events-empty").hidden = evs.length > 0;
  }

  function tickCountdowns() {
    for (const card of f("cards").children) {
      if (card.dataset.state === "OPEN") {
        setText(card, "next", nextProbeText({ state: "OPEN", next_probe: card.dataset.nextProbe }));
      }
    }
    // The keys shown of an expanded family count down as the cards do.
    for (const tr of document.querySelectorAll('[data-f=key-rows] > tr[data-state="OPEN"]')) {
      setText(tr, "key-probe", nextProbeText({ state: "OPEN", next_probe: tr.dataset.nextProbe }));
    }
  }

  async function getJSON(path, signal, params) {
    if (params) path += "?" + params;
    const res = await fetch(path, { cache: "no-store", headers: { Accept: "application/json" }, signal });
    if (!res.ok) {
      // The server says why in {"error": "..."}: say that, not the URL,
      // which a search or a long name makes kilobytes long.
      let why = "";
      try { why = (await res.json()).error || ""; } catch (e) { /* no JSON body */ }
      const what = path.split("?")[0] + ": HTTP " + res.status + (why ? ": " + why : "");
      throw Object.assign(new Error(what), { status: res.status });
    }
    const date = Date.parse(res.headers.get("X-Server-Time") || res.headers.get("Date") || "");
    return { body: await res.json(), date, more: res.headers.get("X-More-Events") === "true" };
  }

  // fetchBand asks for the events of the named breakers over the span of
  // the bands, page after page while the log has more (bandPages at
  // most), and groups them by breaker. Events recorded between two pages
  // push the older ones on: the next page then starts with the last few
  // of the one before, which are skipped.
  async function fetchBand(names, signal) {
    // now: the bands end when the events were read, not when the counters
    // were, so that an event read after the counters still fits.
    const band = { byName: new Map(), cut: 0, now: serverNow };
    if (!names.length) return band;
    const params = new URLSearchParams({ limit: String(bandLimit), since: new Date(serverNow - bandMS).toISOString() });
    for (const name of names) params.append("source", name);
    const key = (e) => JSON.stringify([e.timestamp, e.source, e.from_state, e.to_state, e.reason]);
    const all = [];
    let more = true;
    for (let n = 1; more && n <= bandPages; n++) {
      params.set("page", String(n));
      const answer = await getJSON("degradation-events", signal, params);
      if (n === 1 && !isNaN(answer.date)) band.now = Math.max(serverNow, answer.date);
      more = answer.more && answer.body.length > 0;
      const keys = answer.body.map(key);
      let overlap = Math.min(keys.length, all.length);
      while (overlap > 0 && !keys.slice(0, overlap).every((k, i) => k === key(all[all.length - overlap + i]))) overlap--;
      all.push(...answer.body.slice(overlap));
    }
    for (const e of all) {
      if (!band.byName.has(e.source)) band.byName.set(e.source, []);
      band.byName.get(e.source).push(e);
    }
    if (more && all.length) band.cut = Date.parse(all[all.length - 1].timestamp) || 0;
    return band;
  }

  let timer = 0, busy = false, again = false, lastOK = "";
  async function refreshOnce() {
    const ctl = new AbortController();
    const guard = window.setTimeout(() => ctl.abort(), Math.max(2 * refresh, 10000));
    try {
      const asked = { page, query, views: JSON.stringify([...famViews]) };
      const same = () => page === asked.page && query === asked.query && JSON.stringify([...famViews]) === asked.views;
      const params = new URLSearchParams({ page: String(page), q: query });
      const [h, ev, keyPages] = await Promise.all([
        getJSON("datasources", ctl.signal, params),
        getJSON("degradation-events?limit=" + cfg.limit, ctl.signal),
        fetchKeys(ctl.signal),
      ]);
      // Another page or search was asked for meanwhile: tick fetches it next.
      if (!same()) return;
      serverNow = isNaN(h.date) ? Date.now() : h.date;
      fetchedAt = performance.now();
      // The bands need the page's breakers: asked for once they are known.
      const band = await fetchBand(h.body.breakers.map((b) => b.name), ctl.signal);
      if (!same()) return;
      renderHealth(h.body, band, keyPages);
      renderEvents(ev.body);
      const up = f("updated");
      up.dateTime = new Date(serverNow).toISOString().slice(0, 19) + "Z";
      up.textContent = lastOK = fmtTime(up.dateTime);
      f("problem").hidden = true;
    } finally {
      window.clearTimeout(guard);
    }
  }

  async function tick() {
    if (busy) { again = true; return; } // a page asked for while refreshing
    if (document.hidden) return; // visibilitychange resumes
    busy = true;
    window.clearTimeout(timer);
    try {
      await refreshOnce();
    } catch (err) {
      const p = f("problem");
      p.textContent = "Refresh failed (" + (err && err.message ? err.message : err) + "). " +
        "Showing data from " + (lastOK || f("updated").textContent) + "; retrying.";
      p.hidden = false;
    } finally {
      busy = false;
      timer = window.setTimeout(tick, again ? 0 : refresh);
      again = false;
    }
  }

  // The operator's controls (httphealth.WithControl): each button asks for
  // the reason of its card, then POSTs it to
  // datasources/{name}/{isolate|bypass|resume} and refreshes.
  function operate(e) {
    const btn = e.target.closest("[data-act]");
    if (!btn || !cfg.controls) return;
    const card = btn.closest(".card");
    send(card.dataset.name, btn.dataset.act, f("ctl-reason", card), f("ctl-msg", card));
  }

  // send POSTs act for the breaker called name (a key's too: its name is
  // escaped whole, "quote%2F600519", as a path with "//" would be
  // redirected to the family), with the reason in input, and says how it
  // went in msg.
  async function send(name, act, input, msg) {
    const reason = input.value.trim();
    if (!reason) {
      msg.dataset.level = "down";
      msg.textContent = "Give a reason first: it goes in the event.";
      input.focus();
      return;
    }
    msg.dataset.level = "";
    msg.textContent = "Sending…";
    try {
      const res = await fetch("datasources/" + encodeURIComponent(name) + "/" + act, {
        method: "POST", cache: "no-store", headers: { Accept: "application/json" },
        body: new URLSearchParams({ reason }),
      });
      const body = await res.json().catch(() => ({}));
      if (!res.ok) throw new Error(body.error || "HTTP " + res.status);
      input.value = "";
      msg.textContent = "Done: " + ((states[body.state] || {}).word || body.state) + ".";
      announce(displayName(name) + ": " + msg.textContent);
    } catch (err) {
      msg.dataset.level = "down";
      msg.textContent = "Refused: " + (err && err.message ? err.message : err);
    }
    tick();
  }

  if (cfg.controls) f("cards").addEventListener("click", operate);
  f("cards").addEventListener("pointermove", pointBand);
  f("cards").addEventListener("pointerdown", pointBand);
  f("cards").addEventListener("pointerout", leaveBand);
  document.addEventListener("pointerdown", tapElsewhere);
  document.addEventListener("pointermove", moveElsewhere);
  // A family's row: expand or collapse it, turn its pages of keys, find a key.
  f("families").addEventListener("click", (e) => {
    const el = e.target instanceof Element ? e.target.closest("button") : null;
    const li = el && el.closest(".family");
    if (!li) return;
    const name = li.dataset.family, view = famViews.get(name);
    if (el.dataset.act && cfg.controls) { // a key's control
      const tr = el.closest("tr.key");
      if (tr) send(tr.dataset.name, el.dataset.act, f("key-reason", li), f("key-ctl-msg", li));
      return;
    }
    if (el.dataset.f === "expand") {
      if (view) famViews.delete(name);
      else famViews.set(name, { page: 1, q: f("key-q", li).value.trim() });
      el.setAttribute("aria-expanded", String(!view));
      f("keylist", li).hidden = !!view;
    } else if (view && el.dataset.f === "key-prev") {
      view.page = Math.max(1, view.page - 1);
    } else if (view && el.dataset.f === "key-next") {
      view.page += 1;
    } else {
      return;
    }
    tick();
  });
  let keyTyping = 0;
  f("families").addEventListener("input", (e) => {
    const li = e.target instanceof Element && e.target.dataset.f === "key-q" ? e.target.closest(".family") : null;
    if (!li) return;
    window.clearTimeout(keyTyping);
    keyTyping = window.setTimeout(() => {
      const view = famViews.get(li.dataset.family);
      if (view) { view.q = e.target.value.trim(); view.page = 1; tick(); }
    }, 250);
  });
  for (const btn of document.querySelectorAll('[data-f=families] [data-f=expand]')) btn.disabled = false;
  f("prev").addEventListener("click", () => { page = Math.max(1, page - 1); tick(); });
  f("next").addEventListener("click", () => { page += 1; tick(); });
  let typing = 0;
  f("q").addEventListener("input", (e) => {
    window.clearTimeout(typing);
    typing = window.setTimeout(() => { query = e.target.value.trim(); page = 1; tick(); }, 250);
  });
  for (const key of ["prev", "next", "q"]) f(key).disabled = false;
  f("prev").disabled = page <= 1;
  f("next").disabled = f("next").hasAttribute("data-end");

  f("live").hidden = false;
  document.addEventListener("visibilitychange", () => { if (!document.hidden) tick(); });
  window.setInterval(tickCountdowns, 1000);
  tick();
})();
