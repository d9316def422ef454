// Shared by the pages: asking the server, building elements (text always as text, never as markup), formatting,
// polling, and the chart helper over plotly.js (served from the installed `plotly` package).

export async function getJson(path, params = {}) {
  const query = new URLSearchParams(params).toString();
  const answer = await fetch(query ? `${path}?${query}` : path, {cache: "no-store"});
  if (!answer.ok) {
    let message = `${answer.status} ${answer.statusText}`;
    try { message = (await answer.json()).error || message; } catch (e) { /* not JSON */ }
    throw new Error(message);
  }
  return answer.json();
}

export async function postAction(action, key) {
  const answer = await fetch("/api/action", {method: "POST", headers: {"Content-Type": "application/json"},
                                             body: JSON.stringify({action, key})});
  let body = {ok: false, message: `${answer.status} ${answer.statusText}`};
  try { body = await answer.json(); } catch (e) { /* keep the status line */ }
  return body;
}

// el("a", {href: "#/", class: "x"}, "text", child, ...): children are nodes or text (set as text, not markup)
export function el(tag, attrs = {}, ...children) {
  const node = document.createElement(tag);
  for (const [name, value] of Object.entries(attrs || {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith("on")) node.addEventListener(name.slice(2), value);
    else if (name === "class") node.className = value;
    else node.setAttribute(name, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

const ESCAPES = {"&": "&amp;", "<": "&lt;", ">": "&gt;", '"': "&quot;", "'": "&#39;"};
// for the few places that build markup in bulk (the trials table of 10,000 rows): every value goes through this
export function escapeHtml(text) {
  return String(text).replace(/[&<>"']/g, (c) => ESCAPES[c]);
}

export function fmtNum(value) {
  if (value === null || value === undefined || value === "") return "";
  if (typeof value !== "number") return String(value);
  if (Number.isInteger(value)) return String(value);
  const size = Math.abs(value);
  return size !== 0 && (size < 1e-3 || size >= 1e5) ? value.toExponential(3) : String(+value.toPrecision(5));
}

export function fmtValue(value) {
  return typeof value === "number" ? fmtNum(value) : typeof value === "string" ? value : JSON.stringify(value);
}

export function fmtTime(seconds) {
  if (!seconds) return "";
  const date = new Date(seconds * 1000);
  const pad = (n) => String(n).padStart(2, "0");
  return `${date.getFullYear()}-${pad(date.getMonth() + 1)}-${pad(date.getDate())} ` +
         `${pad(date.getHours())}:${pad(date.getMinutes())}:${pad(date.getSeconds())}`;
}

export function fmtDuration(seconds) {
  if (seconds === null || seconds === undefined) return "";
  if (seconds < 60) return `${seconds.toFixed(seconds < 10 ? 1 : 0)} s`;
  const m = Math.floor(seconds / 60), s = Math.floor(seconds % 60);
  if (m < 60) return `${m} min ${s} s`;
  return `${Math.floor(m / 60)} h ${m % 60} min`;
}

export function fmtBytes(size) {
  const units = ["B", "KB", "MB", "GB", "TB"];
  let i = 0;
  while (size >= 1024 && i < units.length - 1) { size /= 1024; i += 1; }
  return `${i ? size.toFixed(1) : size} ${units[i]}`;
}

export function fmtBest(best) {
  if (!best) return "";
  return `${best.metric} ${fmtNum(best.value)}` + (best.trial ? ` (${best.trial})` : "");
}

export function stateBadge(state) {
  return el("span", {class: `state state-${String(state).replace(/[^a-z]/g, "")}`}, state);
}

// `step()` (async) every `ms` from start to start (at least a quarter of that after the previous one ended, when a
// step takes longer); `stop()` ends it. The page shows a failed poll.
export function poll(step, ms) {
  let timer = null, stopped = false;
  const live = document.getElementById("live");
  async function run() {
    const began = performance.now();
    try {
      await step();
      if (live) { live.textContent = "live"; live.className = "live-ok"; }
    } catch (err) {
      if (live) { live.textContent = `not updated: ${err.message}`; live.className = "live-error"; }
    }
    if (!stopped) timer = setTimeout(run, Math.max(ms / 4, ms - (performance.now() - began)));
  }
  run();
  return {stop() { stopped = true; clearTimeout(timer); }};
}

export function link(hash, text) {
  return el("a", {href: hash}, text);
}

export function runHash(key) { return `#/run/${encodeURIComponent(key)}`; }
export function sweepHash(key) { return `#/sweep/${encodeURIComponent(key)}`; }
export function compareHash(keys) { return `#/compare/${keys.map(encodeURIComponent).join(",")}`; }
export function fileUrl(key) { return `/files/${key.split("/").map(encodeURIComponent).join("/")}`; }

const CONFIG = {displaylogo: false, responsive: true, modeBarButtonsToRemove: ["select2d", "lasso2d"]};
let plotlyLoaded = null;

// plotly.js (served from the installed `plotly` package), loaded once, beside the page's first requests: the
// tables show while it loads, the charts wait for it
export function plotly() {
  if (!plotlyLoaded) {
    plotlyLoaded = new Promise((resolve, reject) => {
      const script = document.createElement("script");
      script.src = "/plotly.min.js";
      script.onload = () => resolve(window.Plotly);
      script.onerror = () => reject(new Error("plotly.min.js did not load"));
      document.head.append(script);
    });
  }
  return plotlyLoaded;
}

// after the next frame is painted: what the page changed so far is seen before a long drawing starts
export function painted() {
  return new Promise((resolve) => requestAnimationFrame(() => setTimeout(resolve, 0)));
}

// draw or redraw `div` (Plotly.react keeps zoom while data change when layout.uirevision stays the same), once
// the page's tables are painted
export async function chart(div, traces, layout) {
  const base = {margin: {l: 60, r: 20, t: 36, b: 40}, height: 360, uirevision: "keep",
                legend: {orientation: "h", y: -0.3}, font: {size: 11}, hovermode: "closest"};
  const Plotly = await plotly();
  await painted();
  return Plotly.react(div, traces, {...base, ...layout}, CONFIG);
}

export function section(title, ...children) {
  return el("section", {}, el("h2", {}, title), ...children);
}
