// mnemo's page: a hash router over a few views, all built with DOM calls
// (textContent, never HTML strings) except a memory's body, which the
// server rendered with raw HTML disabled. The bearer token comes once in
// the URL fragment (#token=…) and is kept in sessionStorage.
"use strict";

const TOKEN_KEY = "mnemo.token";
const view = () => document.getElementById("view");

// ---- token and API ----------------------------------------------------

function takeToken() {
  const m = location.hash.match(/(?:^#|[&?])token=([^&]+)/);
  if (m) {
    sessionStorage.setItem(TOKEN_KEY, decodeURIComponent(m[1]));
    history.replaceState(null, "", location.pathname + "#/");
  }
  return sessionStorage.getItem(TOKEN_KEY);
}

class APIError extends Error {
  constructor(status, message, retry) { super(message); this.status = status; this.retry = retry; }
}

async function api(name, params, signal) {
  const qs = new URLSearchParams();
  for (const [k, v] of Object.entries(params || {})) {
    if (v !== undefined && v !== null && v !== "") qs.set(k, v);
  }
  const res = await fetch("/api/" + name + "?" + qs, {
    headers: { Authorization: "Bearer " + sessionStorage.getItem(TOKEN_KEY) },
    signal,
  });
  let body = null;
  try { body = await res.json(); } catch (e) { body = null; }
  if (!res.ok) {
    if (res.status === 401) sessionStorage.removeItem(TOKEN_KEY);
    throw new APIError(res.status, (body && body.error) || res.statusText, !!(body && body.retry));
  }
  return body;
}

// ---- small DOM helpers --------------------------------------------------

function el(tag, attrs, ...kids) {
  const e = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v === undefined || v === null || v === false) continue;
    if (k === "class") e.className = v;
    else if (k === "text") e.textContent = v;
    else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
    else e.setAttribute(k, v === true ? "" : v);
  }
  for (const k of kids.flat(Infinity)) {
    if (k === null || k === undefined || k === false) continue;
    e.append(k instanceof Node ? k : document.createTextNode(String(k)));
  }
  return e;
}

const svgNS = "http://www.w3.org/2000/svg";
function svg(tag, attrs) {
  const e = document.createElementNS(svgNS, tag);
  for (const [k, v] of Object.entries(attrs || {})) e.setAttribute(k, v);
  return e;
}

function show(...nodes) {
  view().replaceChildren(...nodes);
}

function notice(kind, text) {
  return el("p", { class: "notice " + kind, role: kind === "error" ? "alert" : "status", text });
}

function fmtDate(s) {
  if (!s) return "";
  const d = new Date(s);
  if (isNaN(d)) return "";
  return d.toISOString().slice(0, 10);
}

function fmtTime(s) {
  if (!s) return "";
  const d = new Date(s);
  if (isNaN(d)) return "";
  return d.toISOString().slice(0, 16).replace("T", " ");
}

function memoryHref(path) { return "#/memory/" + encodeURIComponent(path); }
function graphHref(c) { return "#/graph/" + encodeURIComponent(c); }
function sessionHref(id, msg) {
  return "#/session/" + encodeURIComponent(id) + (msg ? "?m=" + encodeURIComponent(msg) : "");
}

// ---- router -----------------------------------------------------------

function route() {
  const h = location.hash.replace(/^#/, "") || "/";
  const [path, query] = h.split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  for (const a of document.querySelectorAll("[data-nav]")) {
    a.classList.toggle("here", a.dataset.nav === (parts[0] || "search") ||
      (a.dataset.nav === "sessions" && parts[0] === "session") ||
      (a.dataset.nav === "search" && parts[0] === "memory"));
  }
  if (!sessionStorage.getItem(TOKEN_KEY)) return tokenView();
  switch (parts[0]) {
    case "memory": return memoryView(parts.slice(1).join("/"));
    case "sessions": return sessionsView(params);
    case "session": return sessionView(parts[1], params.get("m"));
    case "graph": return graphView(parts.slice(1).join("/"));
    case "status": return statusView();
    default: return searchView(params);
  }
}

function tokenView() {
  const input = el("input", { id: "token", type: "password", autocomplete: "off", placeholder: "token", "aria-label": "token" });
  show(el("section", { class: "card narrow" },
    el("h1", { text: "Open mnemo" }),
    el("p", { text: "This page needs the token serve --http uses. Run mnemo ui to open it with the token, or paste the token from INDEX/http.token here." }),
    el("form", { onsubmit: (ev) => {
      ev.preventDefault();
      if (input.value.trim()) { sessionStorage.setItem(TOKEN_KEY, input.value.trim()); route(); startEvents(); }
    } }, input, el("button", { type: "submit", text: "Open" }))));
}

// errorNotice shows what went wrong in place of the view's content. An
// answer marked retry is a moment (the serve is starting, or the index is
// being handed over): the view is drawn again as soon as the status stream
// says the index answers (onStatus).
let redrawWhenBack = false;

function errorNotice(err) {
  if (err.name === "AbortError") return null;
  if (err.status === 401) { tokenView(); return null; }
  if (err.retry) redrawWhenBack = true;
  if (err.status === 503) return notice("wait", err.message);
  return notice("error", err.message);
}

// ---- search -----------------------------------------------------------

let searchCtl = null;

function searchView(params) {
  const corpus = params.get("corpus") === "sessions" ? "sessions" : "memories";
  const field = (name, label, attrs) => el("label", { class: "field" }, el("span", { text: label }),
    el("input", Object.assign({ name, value: params.get(name) || "" }, attrs || {})));
  const q = el("input", { id: "q", type: "search", name: "q", value: params.get("q") || "", placeholder: corpus === "sessions" ? "Search agent sessions…" : "Search memories…", autocomplete: "off", "aria-label": "search", autofocus: true });
  const mode = el("select", { name: "mode", "aria-label": "mode" },
    ["hybrid", "semantic", "fulltext"].map((m) => el("option", { value: m, selected: params.get("mode") === m, text: m })));
  const filters = corpus === "sessions"
    ? [field("project", "project"), field("agent", "agent"),
       el("label", { class: "field" }, el("span", { text: "role" }),
         el("select", { name: "role" }, ["", "user", "assistant"].map((r) => el("option", { value: r, selected: (params.get("role") || "") === r, text: r || "any" })))),
       field("from", "from", { type: "date" }), field("to", "to", { type: "date" })]
    : [field("folder", "folder"), field("tags", "tags", { placeholder: "a, b" }),
       field("from", "from", { type: "date" }), field("to", "to", { type: "date" })];
  const tabs = el("div", { class: "tabs", role: "tablist" },
    ["memories", "sessions"].map((c) => el("a", { role: "tab", href: "#/?corpus=" + c, class: c === corpus ? "on" : "", "aria-selected": c === corpus ? "true" : "false", text: c === "memories" ? "Memories" : "Sessions" })));
  const results = el("ol", { id: "results", class: "results" });
  const state = el("div", { id: "search-state" });
  const form = el("form", { class: "search", role: "search", onsubmit: (e) => e.preventDefault() },
    el("div", { class: "row" }, q, mode), el("details", { class: "filters", open: filters.some((f) => f.querySelector("[name]").value) },
      el("summary", { text: "filters" }), el("div", { class: "grid" }, filters)));
  const run = () => runSearch(corpus, form, state, results);
  form.addEventListener("input", debounce(run, 80));
  // A text field fires "change" when it loses focus, as when ↓ moves to
  // the first result: runSearch skips a search the list already answers,
  // or the list would be redrawn under the focused result.
  form.addEventListener("change", run);
  q.addEventListener("keydown", (e) => moveSelection(e, results));
  results.addEventListener("keydown", (e) => moveSelection(e, results));
  show(tabs, form, state, results);
  q.focus();
  if (q.value.trim()) run();
  else state.replaceChildren(el("p", { class: "hint", text: corpus === "sessions"
    ? "Type to search what you and your agents said. ↑ ↓ move, Enter opens."
    : "Type to search your memories. ↑ ↓ move, Enter opens." }));
}

function debounce(fn, ms) {
  let t = 0;
  return () => { clearTimeout(t); t = setTimeout(fn, ms); };
}

async function runSearch(corpus, form, state, results) {
  const p = { corpus };
  for (const f of form.querySelectorAll("[name]")) if (f.value.trim()) p[f.name] = f.value.trim();
  const key = new URLSearchParams(p).toString();
  history.replaceState(null, "", "#/?" + key);
  if (searchCtl) searchCtl.abort(); // only what the form says now may draw
  if (!p.q) { results.replaceChildren(); state.replaceChildren(); delete results.dataset.params; return; }
  if (results.dataset.params === key) return;
  searchCtl = new AbortController();
  try {
    const page = await api("search", p, searchCtl.signal);
    if (corpus === "sessions") drawSessionHits(page, state, results);
    else drawMemoryHits(page, state, results);
    results.dataset.params = key;
    results.dataset.query = p.q; // what the list now answers (tests wait for it)
  } catch (err) {
    const n = errorNotice(err);
    if (n) { state.replaceChildren(n); results.replaceChildren(); }
  }
}

function emptyNotice(page, found, total) {
  if (found > 0) {
    return el("p", { class: "count", text: total + (total === 1 ? " result" : " results") + (page.indexing ? " so far — still indexing…" : "") });
  }
  if (page.indexing) return notice("wait", "indexing… nothing found yet; results appear as the index fills.");
  return notice("empty", page.hint || "nothing found in this scope.");
}

function drawMemoryHits(page, state, results) {
  state.replaceChildren(emptyNotice(page, page.results.length, page.totalCount));
  results.replaceChildren(...page.results.map((r) => el("li", { class: "result" },
    el("a", { href: memoryHref(r.path), class: "title", text: r.title || r.path }),
    el("div", { class: "meta" },
      el("span", { class: "path", text: r.path }),
      el("span", { class: "score", title: "text " + r.textScore.toFixed(3) + " · semantic " + r.semanticScore.toFixed(3) + " · decay " + r.decay.toFixed(3), text: "score " + r.score.toFixed(3) }),
      r.modified ? el("span", { text: fmtDate(r.modified) }) : null,
      (r.tags || []).map((t) => el("span", { class: "tag", text: t }))),
    (r.snippets || []).slice(0, 2).map((s) => el("p", { class: "snippet" }, highlighted(s))))));
}

function drawSessionHits(page, state, results) {
  state.replaceChildren(emptyNotice(page, page.sessions.length, page.totalSessions));
  results.replaceChildren(...page.sessions.map((s) => {
    const first = s.hits && s.hits[0];
    return el("li", { class: "result" },
      el("a", { href: sessionHref(s.sessionId, first && first.messageId), class: "title", text: (s.project || "(no project)") + " · " + s.sourceAgent }),
      el("div", { class: "meta" },
        el("span", { text: fmtTime(s.ended || s.started) }),
        el("span", { text: s.messageCount + " messages" }),
        el("span", { class: "score", text: "score " + s.score.toFixed(3) }),
        s.archived ? el("span", { class: "tag archived", text: "archived" }) : null),
      (s.hits || []).map((h) => el("a", { class: "hit", href: sessionHref(s.sessionId, h.messageId) },
        el("span", { class: "role " + h.role, text: h.role }), " ", highlighted(h.excerpt))));
  }));
}

// highlighted turns the engine's **match** markers into <mark> elements,
// the text between them staying text.
function highlighted(s) {
  return String(s).split("**").map((part, i) => (i % 2 ? el("mark", { text: part }) : document.createTextNode(part)));
}

function moveSelection(e, results) {
  const links = [...results.querySelectorAll("a.title")];
  if (!links.length || !["ArrowDown", "ArrowUp"].includes(e.key)) return;
  e.preventDefault();
  const at = links.indexOf(document.activeElement);
  const next = e.key === "ArrowDown" ? Math.min(at + 1, links.length - 1) : at - 1;
  if (next < 0) document.getElementById("q").focus();
  else links[next].focus();
}

// ---- a memory ---------------------------------------------------------

async function memoryView(path) {
  show(notice("wait", "loading…"));
  let m;
  try {
    m = await api("memory", { id: path });
  } catch (err) { const n = errorNotice(err); if (n) show(n); return; }
  const body = el("div", { class: "markdown" });
  body.innerHTML = m.html; // rendered by the server with raw HTML disabled and dangerous URLs dropped
  const lead = body.firstElementChild;
  if (lead && lead.tagName === "H1" && lead.textContent.trim() === (m.title || "").trim()) lead.remove(); // shown once, above
  for (const a of body.querySelectorAll("a[href]")) {
    const href = a.getAttribute("href");
    if (!href.startsWith("#")) { a.rel = "noopener noreferrer"; a.target = "_blank"; }
  }
  const front = el("dl", { class: "front" },
    m.created ? [el("dt", { text: "created" }), el("dd", { text: fmtDate(m.created) })] : null,
    m.modified ? [el("dt", { text: "modified" }), el("dd", { text: fmtDate(m.modified) })] : null,
    m.tags && m.tags.length ? [el("dt", { text: "tags" }), el("dd", {}, m.tags.map((t) => el("a", { class: "tag", href: "#/?q=" + encodeURIComponent(t) + "&tags=" + encodeURIComponent(t), text: t })))] : null,
    Object.entries(m.meta || {}).map(([k, v]) => [el("dt", { text: k }), el("dd", { text: typeof v === "string" ? v : JSON.stringify(v) })]));
  const side = el("aside", { class: "side" },
    linkList("Links to", m.concepts.map((c) => ({ href: graphHref(c.name), text: c.name, note: c.count > 1 ? "×" + c.count : "" })), "concepts"),
    linkList("Linked from", m.backlinks.map((p) => ({ href: memoryHref(p), text: p })), "backlinks"),
    linkList("Related concepts", m.related.map((r) => ({ href: graphHref(r.name), text: r.name, note: r.coOccurrenceCount + " together" })), "related"),
    linkList("Similar concepts", m.similar.map((s) => ({ href: graphHref(s.name), text: s.name, note: s.similarity.toFixed(2) })), "similar"));
  show(el("article", { class: "memory", id: "memory" },
    el("p", { class: "crumbs" }, el("a", { href: "#/", text: "search" }), " / ", el("span", { class: "path", text: m.path })),
    el("h1", { class: "title", text: m.title || m.path }), front, body), side);
  document.title = (m.title || m.path) + " — mnemo";
}

function linkList(title, items, id) {
  return el("section", { class: "links", id },
    el("h2", { text: title }),
    items.length ? el("ul", {}, items.map((i) => el("li", {}, el("a", { href: i.href, text: i.text }), i.note ? el("span", { class: "note", text: " " + i.note }) : null)))
      : el("p", { class: "none", text: "none" }));
}

// ---- sessions ---------------------------------------------------------

async function sessionsView(params) {
  const page = Number(params.get("page") || 1);
  const chart = el("section", { class: "card", id: "activity" }, el("h2", { text: "Activity" }), notice("wait", "loading…"));
  const list = el("section", { class: "card" }, el("h2", { text: "Sessions, newest first" }), notice("wait", "loading…"));
  show(chart, list);
  api("activity").then((a) => drawActivity(chart, a)).catch((err) => {
    const n = errorNotice(err); if (n) chart.replaceChildren(el("h2", { text: "Activity" }), n);
  });
  try {
    const l = await api("sessions", { page, pageSize: 50, project: params.get("project"), agent: params.get("agent") });
    const rows = l.sessions.map((s) => el("li", { class: "session" + (s.archived ? " archived" : "") },
      el("a", { href: sessionHref(s.sessionId), class: "title", text: s.title || s.sessionId }),
      el("div", { class: "meta" },
        el("span", { text: fmtTime(s.ended || s.started) }),
        el("span", { text: s.sourceAgent }),
        el("span", { class: "path", text: s.project || "(no project)" }),
        el("span", { text: s.messageCount + " messages" }),
        s.archived ? el("span", { class: "tag archived", title: "its transcript file is gone; mnemo kept it", text: "archived" }) : null)));
    const more = [];
    if (page > 1) more.push(el("a", { href: "#/sessions?page=" + (page - 1), text: "← newer" }));
    if (page * l.pageSize < l.totalCount) more.push(el("a", { href: "#/sessions?page=" + (page + 1), text: "older →" }));
    list.replaceChildren(el("h2", { text: "Sessions, newest first" }),
      l.sessions.length ? el("ol", { class: "results", id: "session-list" }, rows)
        : notice(l.indexing ? "wait" : "empty", l.indexing ? "indexing… no sessions yet." : "no sessions found."),
      el("p", { class: "pager" }, l.totalCount + " sessions ", more));
  } catch (err) { const n = errorNotice(err); if (n) list.replaceChildren(el("h2", { text: "Sessions" }), n); }
}

const palette = ["#4e79a7", "#f28e2b", "#e15759", "#76b7b2", "#59a14f", "#edc948", "#b07aa1", "#ff9da7", "#9c755f", "#bab0ac"];

// drawActivity draws sessions per week as stacked bars, by project or by
// agent, in plain SVG.
function drawActivity(box, a) {
  let by = "projects";
  const chartBox = el("div", { class: "chart" });
  const pick = el("div", { class: "tabs small" }, ["projects", "agents"].map((k) =>
    el("button", { type: "button", "data-by": k, class: k === by ? "on" : "", text: "by " + k.slice(0, -1), onclick: () => {
      by = k;
      for (const b of pick.children) b.classList.toggle("on", b.dataset.by === k);
      draw();
    } })));
  const draw = () => chartBox.replaceChildren(...activityChart(a.days, a[by]));
  box.replaceChildren(el("h2", { text: "Activity" }), a.sessions ? pick : null, chartBox);
  if (!a.sessions) { chartBox.replaceChildren(notice("empty", "no sessions in the last year.")); return; }
  draw();
}

function activityChart(days, series) {
  const weeks = Math.ceil(days.length / 7);
  const names = Object.keys(series).sort((x, y) => sum(series[y]) - sum(series[x]));
  const top = names.slice(0, 7);
  const rows = top.map((n) => weekly(series[n], weeks));
  if (names.length > top.length) {
    const rest = new Array(weeks).fill(0);
    for (const n of names.slice(top.length)) weekly(series[n], weeks).forEach((v, i) => { rest[i] += v; });
    rows.push(rest);
    top.push("other");
  }
  const totals = new Array(weeks).fill(0);
  rows.forEach((r) => r.forEach((v, i) => { totals[i] += v; }));
  const peak = Math.max(1, ...totals);
  const W = 720, H = 160, pad = 24, bw = (W - pad) / weeks;
  const g = svg("svg", { viewBox: `0 0 ${W} ${H + 18}`, class: "bars", role: "img", "aria-label": "sessions per week over the last year" });
  g.append(svg("line", { x1: pad, y1: H, x2: W, y2: H, class: "axis" }));
  const label = svg("text", { x: 0, y: 10, class: "tick" }); label.textContent = String(peak); g.append(label);
  for (let w = 0; w < weeks; w++) {
    let y = H;
    rows.forEach((r, i) => {
      if (!r[w]) return;
      const h = (r[w] / peak) * (H - 8);
      y -= h;
      const rect = svg("rect", { x: pad + w * bw + 1, y, width: Math.max(1, bw - 2), height: h, fill: palette[i % palette.length] });
      const t = svg("title", {}); t.textContent = `${top[i]}: ${r[w]} in the week of ${days[w * 7]}`;
      rect.append(t); g.append(rect);
    });
    if (w % 13 === 0 && w < weeks - 6) {
      const t = svg("text", { x: pad + w * bw, y: H + 14, class: "tick" }); t.textContent = days[w * 7].slice(0, 7); g.append(t);
    }
  }
  const legend = el("ul", { class: "legend" }, top.map((n, i) => el("li", {},
    el("span", { class: "swatch c" + (i % palette.length) }), n || "(none)", el("span", { class: "note", text: " " + sum(rows[i]) }))));
  return [g, legend];
}

function weekly(daily, weeks) {
  const out = new Array(weeks).fill(0);
  daily.forEach((v, i) => { out[Math.floor(i / 7)] += v; });
  return out;
}

function sum(a) { return a.reduce((x, y) => x + y, 0); }

async function sessionView(id, msg) {
  show(notice("wait", "loading…"));
  let v;
  try {
    v = await api("session", msg ? { id, message: msg } : { id });
  } catch (err) { const n = errorNotice(err); if (n) show(n); return; }
  const msgs = v.messages.map((m, i) => el("li", { class: "msg " + m.role + (msg && i === v.focus ? " focus" : ""), id: "m-" + m.messageId },
    el("div", { class: "who" }, el("span", { class: "role", text: m.role }), el("time", { text: fmtTime(m.timestamp) })),
    el("div", { class: "text", text: m.text })));
  const head = el("header", { class: "card" },
    el("h1", { text: v.project || v.sessionId }),
    el("div", { class: "meta" },
      el("span", { text: v.sourceAgent }), el("span", { text: fmtTime(v.started) + " → " + fmtTime(v.ended) }),
      el("span", { text: v.messageCount + " messages" }),
      v.archived ? el("span", { class: "tag archived", text: "archived " + fmtDate(v.archivedAt) }) : null),
    el("p", { class: "path", text: v.path }),
    msg || v.offset > 0 ? el("p", {}, el("a", { href: sessionHref(v.sessionId), text: "from the start" }),
      msg ? " · showing the messages around the hit" : "") : null);
  const more = !msg && v.offset + v.messages.length < v.messageCount
    ? el("p", { class: "pager", text: `showing ${v.messages.length} of ${v.messageCount} messages` }) : null;
  show(head, el("ol", { class: "conversation", id: "conversation" }, msgs), more);
  const f = document.querySelector(".msg.focus");
  if (f) f.scrollIntoView({ block: "center" });
}

// ---- the concept graph -------------------------------------------------

let cy = null;

async function graphView(concept) {
  const input = el("input", { id: "concept", type: "search", placeholder: "Jump to a concept…", autocomplete: "off", list: "concept-options", "aria-label": "concept", value: concept || "" });
  const options = el("datalist", { id: "concept-options" });
  const box = el("div", { id: "graph", class: "graph" });
  const nodes = el("ul", { id: "graph-nodes", class: "node-list" });
  const state = el("div", { id: "graph-state" });
  const jump = (ev) => { ev.preventDefault(); if (input.value.trim()) location.hash = graphHref(input.value.trim()); };
  input.addEventListener("input", debounce(async () => {
    try {
      const cs = await api("concepts", { q: input.value.trim() });
      options.replaceChildren(...cs.map((c) => el("option", { value: c.name, text: c.mentions + " mentions" })));
    } catch (e) { /* the list is a convenience */ }
  }, 100));
  show(el("form", { class: "search graph-form", onsubmit: jump }, el("div", { class: "row" }, input, options, el("button", { type: "submit", text: "Show" }))),
    state, box, el("section", { class: "card" }, el("h2", { text: "Concepts shown" }), nodes));
  if (!concept) {
    try {
      const cs = await api("concepts", { q: "" });
      if (!cs.length) { state.replaceChildren(notice("empty", "no concepts yet: link notes with [[WikiLinks]].")); return; }
      state.replaceChildren(el("p", { class: "hint", text: "The most mentioned concepts; pick one to see its neighbourhood." }));
      nodes.replaceChildren(...cs.map((c) => el("li", {}, el("a", { href: graphHref(c.name), text: c.name }), el("span", { class: "note", text: " " + c.mentions }))));
      box.remove();
    } catch (err) { const n = errorNotice(err); if (n) state.replaceChildren(n); }
    return;
  }
  try {
    const g = await api("graph", { concept });
    drawGraph(box, nodes, g);
    state.replaceChildren(el("p", { class: "hint", text: `${g.nodes.length} concepts around “${g.concept}”. Click a concept to expand it; double-click to centre on it.` }));
  } catch (err) { const n = errorNotice(err); if (n) { state.replaceChildren(n); box.remove(); } }
}

function drawGraph(box, list, g) {
  if (cy) cy.destroy();
  const dark = matchMedia("(prefers-color-scheme: dark)").matches;
  cy = cytoscape({
    container: box,
    elements: [],
    style: [
      { selector: "node", style: {
        "background-color": (n) => palette[Math.abs(n.data("community")) % palette.length],
        label: "data(id)", "font-size": 12, "min-zoomed-font-size": 6, color: dark ? "#e8e8e8" : "#222",
        "text-outline-color": dark ? "#1b1d21" : "#fff", "text-outline-width": 2,
        width: "data(size)", height: "data(size)", "text-valign": "bottom", "text-margin-y": 3 } },
      { selector: "node.centre", style: { "border-width": 3, "border-color": dark ? "#fff" : "#222" } },
      { selector: "edge", style: { width: "data(w)", "line-color": dark ? "#555" : "#ccc", "curve-style": "straight" } },
    ],
    wheelSensitivity: 0.3,
  });
  addToGraph(g, list);
  cy.getElementById(g.concept).addClass("centre");
  relayout();
  cy.on("tap", "node", async (ev) => {
    const id = ev.target.id();
    try { addToGraph(await api("graph", { concept: id, depth: 1, max: 15 }), list); relayout(); } catch (e) { /* keep what is drawn */ }
  });
  cy.on("dbltap", "node", (ev) => { location.hash = graphHref(ev.target.id()); });
}

function addToGraph(g, list) {
  const add = [];
  for (const n of g.nodes) {
    if (cy.getElementById(n.id).length) continue;
    add.push({ group: "nodes", data: { id: n.id, community: n.community, size: 14 + Math.min(40, Math.sqrt(n.mentions) * 5) } });
    list.append(el("li", { "data-concept": n.id }, el("a", { href: graphHref(n.id), text: n.id }),
      el("span", { class: "note", text: ` ${n.mentions} mentions · community ${n.community}` })));
  }
  for (const e of g.edges) {
    const id = e.source + "\u0000" + e.target;
    if (cy.getElementById(id).length || cy.getElementById(e.target + "\u0000" + e.source).length) continue;
    add.push({ group: "edges", data: { id, source: e.source, target: e.target, w: 1 + Math.min(6, e.weight) } });
  }
  cy.add(add.filter((x) => x.group === "nodes"));
  cy.add(add.filter((x) => x.group === "edges" && cy.getElementById(x.data.source).length && cy.getElementById(x.data.target).length));
}

function relayout() {
  cy.layout({ name: "cose", animate: false, nodeRepulsion: () => 60000, idealEdgeLength: () => 110, nodeOverlap: 40, gravity: 0.5, randomize: false, fit: true, padding: 30 }).run();
}

// ---- status -----------------------------------------------------------

let lastStatus = null;

function statusView() {
  show(el("section", { id: "status" }, lastStatus ? statusCards(lastStatus) : notice("wait", "loading…")));
}

function statusCards(st) {
  if (st.error) return [notice("wait", st.error)];
  const m = st.memories;
  const kv = (pairs) => el("dl", { class: "kv" }, pairs.filter((p) => p[1] !== undefined && p[1] !== "").map(([k, v]) => [el("dt", { text: k }), el("dd", { text: String(v) })]));
  const problems = (m.skipped || []).map((s) => el("li", { class: "warn", text: `skipped ${s.path}: ${s.reason}` }))
    .concat((m.warnings || []).map((w) => el("li", { class: "warn", text: `${w.path}: ${w.message}` })));
  const out = [el("section", { class: "card" },
    el("h2", {}, "Memories ", m.indexing ? el("span", { class: "tag wait", id: "mem-indexing", text: "indexing…" }) : el("span", { class: "tag ok", text: "up to date" })),
    m.lastError ? notice("error", "last sync failed: " + m.lastError) : null,
    m.damaged ? notice("error", "full-text index damaged: " + m.damaged) : null,
    m.embedderError ? notice("error", "embedder: " + m.embedderError) : null,
    m.unfinished ? notice("wait", "a full sync was cut short at " + m.unfinished + "; searches see part of the folder") : null,
    kv([["memory folder", m.memoryDir], ["index", m.indexDir], ["files", m.files], ["chunks", m.chunks],
      ["embedder", m.embedder + " (" + m.dimensions + " dims)"], ["last sync", fmtTime(m.lastSync)],
      ["concepts", m.graph.concepts], ["links", m.graph.mentions], ["communities", m.graph.communities < 0 ? "not yet computed" : m.graph.communities],
      ["link rules", m.graph.linkRules]]),
    problems.length ? el("details", {}, el("summary", { text: problems.length + " warnings" }), el("ul", {}, problems)) : null)];
  const s = st.sessions;
  if (s) {
    out.push(el("section", { class: "card" },
      el("h2", {}, "Agent sessions ", s.indexing ? el("span", { class: "tag wait", text: "indexing…" }) : el("span", { class: "tag ok", text: "up to date" })),
      s.lastError ? notice("error", "last sync failed: " + s.lastError) : null,
      s.damaged ? notice("error", "index damaged: " + s.damaged) : null,
      kv([["sessions", s.sessions], ["archived", s.archived], ["messages", s.messages], ["last sync", fmtTime(s.lastSync)]]),
      el("div", { class: "table-wrap" }, el("table", { class: "sources" },
        el("thead", {}, el("tr", {}, ["source", "root", "sessions", "messages", "coverage", ""].map((h) => el("th", { text: h })))),
        el("tbody", {}, (s.sources || []).map((src) => el("tr", { class: src.exists ? "" : "absent" },
          el("td", { "data-label": "source", text: src.kind }), el("td", { "data-label": "root", class: "path", text: src.root }),
          el("td", { "data-label": "sessions", text: src.sessions }), el("td", { "data-label": "messages", text: src.messages }),
          el("td", { "data-label": "coverage", text: coverageText(src.coverage) }),
          el("td", { "data-label": "", class: src.error ? "warn" : "", text: src.error || (src.exists ? "" : "not found") }))))))));
  }
  out.push(el("p", { class: "hint", text: "mnemo " + (st.version || "") + " · live" }));
  return out;
}

function coverageText(c) {
  if (!c) return "";
  const parts = [];
  for (const [k, v] of Object.entries(c)) {
    if (typeof v === "number" && v) parts.push(k + " " + v);
  }
  return parts.join(" · ");
}

// startEvents follows the status stream while the page is shown; fetch,
// unlike EventSource, can send the token. The stream holds one of the six
// connections a browser keeps to a host, for all its tabs: a page that
// goes into the back/forward cache or a tab that is hidden gives it back
// (stopEvents), or the seventh page of mnemo would wait for a connection.
let eventsCtl = null;

async function startEvents() {
  const token = sessionStorage.getItem(TOKEN_KEY);
  if (!token || eventsCtl || document.hidden) return;
  const ctl = eventsCtl = new AbortController();
  try {
    const res = await fetch("/api/events", { headers: { Authorization: "Bearer " + token }, signal: ctl.signal });
    if (!res.ok) { // a token the server refuses: nothing to follow
      if (eventsCtl === ctl) eventsCtl = null;
      return;
    }
    const reader = res.body.pipeThrough(new TextDecoderStream()).getReader();
    let buf = "";
    for (;;) {
      const { value, done } = await reader.read();
      if (done) break;
      buf += value;
      let i;
      while ((i = buf.indexOf("\n\n")) >= 0) {
        const chunk = buf.slice(0, i); buf = buf.slice(i + 2);
        const data = chunk.split("\n").filter((l) => l.startsWith("data: ")).map((l) => l.slice(6)).join("\n");
        if (data) onStatus(JSON.parse(data));
      }
    }
  } catch (e) { /* the stream ends with the page, the server, or stopEvents */ }
  if (eventsCtl !== ctl) return; // stopped on purpose
  eventsCtl = null;
  setTimeout(startEvents, 2000); // the server went away: follow the next one
}

function stopEvents() {
  if (eventsCtl) eventsCtl.abort();
  eventsCtl = null;
}

function onStatus(st) {
  lastStatus = st;
  if (!st.error && redrawWhenBack) { redrawWhenBack = false; route(); }
  const busy = !st.error && (st.memories.indexing || (st.sessions && st.sessions.indexing));
  document.getElementById("indexing-badge").hidden = !busy;
  const box = document.getElementById("status");
  if (box) box.replaceChildren(...statusCards(st));
}

// ---- start ------------------------------------------------------------

takeToken();
window.addEventListener("hashchange", () => { if (!/token=/.test(location.hash)) route(); else { takeToken(); route(); } });
route();
startEvents();
window.addEventListener("pagehide", stopEvents);
window.addEventListener("pageshow", (e) => { if (e.persisted) startEvents(); });
document.addEventListener("visibilitychange", () => { if (document.hidden) stopEvents(); else startEvents(); });
