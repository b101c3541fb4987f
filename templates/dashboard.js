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
  // The page of breakers shown (from 1) and the search text: the server
  // sends one page of them, those that are not ok first.
  let page = cfg.page || 1, query = cfg.q || "";

  // displayName mirrors httphealth's: the registered name, else the part
  // after the last ":" (fallback:sina → sina), else the part of that before
  // its first "_" (tencent_kline → tencent), else the bare name.
  function displayName(src) {
    if (names.has(src)) return names.get(src);
    const base = src.slice(src.lastIndexOf(":") + 1);
    if (names.has(base)) return names.get(base);
    const i = base.indexOf("_");
    if (i > 0 && names.has(base.slice(0, i))) return names.get(base.slice(0, i));
    return base;
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
    setRow(card, "rejections", String(b.rejections || 0), counted);
    setRow(card, "ignored", String(b.ignored || 0), true);
    setRow(card, "rate_limited", String(b.rate_limited || 0), true);
    setRow(card, "opened", fmtTime(b.opened_at), true);
    setRow(card, "last_failure", fmtTime(b.last_failure), true);
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
    if (h.dropped_events) s += " " + h.dropped_events + " state changes not logged nor hooked (event queue full).";
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
    empty.hidden = h.breakers.length > 0;
    // The address shows the view, so that a reload or a shared link opens it.
    const params = new URLSearchParams();
    if (h.page > 1) params.set("page", String(h.page));
    if (h.q) params.set("q", h.q);
    const want = location.pathname + (params.size ? "?" + params : "");
    if (location.pathname + location.search !== want) history.replaceState(null, "", want);
  }

  function renderHealth(h) {
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
    h.breakers.forEach((b, i) => {
      let card = old.get(b.name);
      old.delete(b.name);
      if (!card) card = tpl.cloneNode(true);
      else if (card.dataset.state !== b.state) changed.push(displayName(b.name) + ": " + (states[b.state] || {}).word);
      fillCard(card, b);
      if (list.children[i] !== card) list.insertBefore(card, list.children[i] || null);
    });
    for (const li of old.values()) li.remove();
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
  }

  async function getJSON(path, signal, params) {
    if (params) path += "?" + params;
    const res = await fetch(path, { cache: "no-store", headers: { Accept: "application/json" }, signal });
    if (!res.ok) throw new Error(path + ": HTTP " + res.status);
    const date = Date.parse(res.headers.get("X-Server-Time") || res.headers.get("Date") || "");
    return { body: await res.json(), date };
  }

  let timer = 0, busy = false, again = false, lastOK = "";
  async function refreshOnce() {
    const ctl = new AbortController();
    const guard = window.setTimeout(() => ctl.abort(), Math.max(2 * refresh, 10000));
    try {
      const asked = { page, query };
      const params = new URLSearchParams({ page: String(page), q: query });
      const [h, ev] = await Promise.all([
        getJSON("datasources", ctl.signal, params),
        getJSON("degradation-events?limit=" + cfg.limit, ctl.signal),
      ]);
      // Another page or search was asked for meanwhile: tick fetches it next.
      if (page !== asked.page || query !== asked.query) return;
      serverNow = isNaN(h.date) ? Date.now() : h.date;
      fetchedAt = performance.now();
      renderHealth(h.body);
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
