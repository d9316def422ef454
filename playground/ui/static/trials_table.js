// The trials table of a sweep: sortable by any column (click its title), filterable by any column (the box under
// the title: `>0.1`, `<=3`, `0.1..0.5`, `=2` for numbers, a part of the text otherwise), rows ticked for
// comparison. Drawn in bulk, every value escaped; above VIRTUAL_FROM rows only those in view (and a margin) are
// in the page, the others stand in as the height they would take, so 10,000 trials draw as fast as 100.
import {el, escapeHtml, fmtDuration, fmtNum, fmtValue, runHash} from "./common.js";

const VIRTUAL_FROM = 300;
const ROW_HEIGHT = 26;     // px: table.trials rows are given this height (ui.css)
const MARGIN_ROWS = 30;    // drawn beyond the view on each side, so a scroll shows rows at once

function shortName(key) { return key.split(".").pop(); }

function numeric(value) { return typeof value === "number" && Number.isFinite(value); }

// a filter box's text as a test of one row in `column`: a range or comparison tests the column's number, any
// other text is looked for in its text (a trial's id, say, where the number sorts)
export function parseFilter(text, column) {
  const t = text.trim();
  if (!t) return null;
  const range = t.match(/^(-?[\d.eE+-]+)\s*\.\.\s*(-?[\d.eE+-]+)$/);
  if (range) {
    const [lo, hi] = [parseFloat(range[1]), parseFloat(range[2])];
    return (r) => { const v = column.value(r); return numeric(v) && v >= lo && v <= hi; };
  }
  const compare = t.match(/^(<=|>=|<|>|=)\s*(-?[\d.eE+-]+)$/);
  if (compare && !Number.isNaN(parseFloat(compare[2]))) {
    const bound = parseFloat(compare[2]);
    const test = {"<": (v) => v < bound, ">": (v) => v > bound, "<=": (v) => v <= bound, ">=": (v) => v >= bound,
                  "=": (v) => v === bound}[compare[1]];
    return (r) => { const v = column.value(r); return numeric(v) && test(v); };
  }
  const needle = t.toLowerCase();
  const text_ = column.text || column.value;
  return (r) => { const v = text_(r); return v !== null && v !== undefined && fmtValue(v).toLowerCase().includes(needle); };
}

export class TrialsTable {
  constructor(sweepKey, onTick) {
    this.sweepKey = sweepKey;
    this.onTick = onTick;
    this.columns = [];
    this.rows = [];
    this.sort = {index: 1, descending: false};
    this.filters = new Map();
    this.ticked = new Set();
    this.pareto = new Set();
    this.head = el("thead");
    this.body = el("tbody");
    this.count = el("p", {class: "note", id: "trial-count"});
    this.table = el("table", {class: "grid trials", id: "trials"}, this.head, this.body);
    this.scroller = el("div", {class: "scroll"}, this.table);
    this.node = el("div", {}, this.count, this.scroller);
    this.shown = [];
    this.painted = "";
    this.scroller.addEventListener("scroll", () => requestAnimationFrame(() => this.paint()));
    this.body.addEventListener("change", (e) => {
      const id = e.target.getAttribute("data-trial");
      if (id === null) return;
      if (e.target.checked) this.ticked.add(id); else this.ticked.delete(id);
      this.onTick(this.ticked);
    });
    this.layout = "";
  }

  // columns from the spec: objectives and parameters; rebuilt only when they change
  setColumns(objectives, params) {
    const layout = JSON.stringify([objectives, params]);
    if (layout === this.layout) return;
    this.layout = layout;
    const columns = [
      {title: "", value: () => null, cell: (r) => `<input type="checkbox" data-trial="${escapeHtml(r.id)}"` +
                                                    `${this.ticked.has(r.id) ? " checked" : ""} aria-label="tick">`,
       fixed: true},
      {title: "trial", value: (r) => r.number ?? r.id, text: (r) => r.id, cell: (r) => this.trialCell(r)},
      {title: "state", value: (r) => r.state, cell: (r) => `<span class="state state-${escapeHtml(
        r.state.replace(/[^a-z]/g, ""))}">${escapeHtml(r.state)}</span>`},
    ];
    objectives.forEach((o, i) => columns.push({
      title: `${o.metric} (${o.mode})`, value: (r) => (r.values || [])[i] ?? null,
      cell: (r) => { const v = (r.values || [])[i]; return v === null || v === undefined ? "" :
                     escapeHtml(fmtNum(v)) + (r.final ? "" : " <span class=\"note\">(latest)</span>"); },
      numeric: true}));
    columns.push(
      {title: "best", value: (r) => r.best, cell: (r) => escapeHtml(fmtNum(r.best)), numeric: true},
      {title: "epochs", value: (r) => r.epochs, cell: (r) => escapeHtml(fmtNum(r.epochs)), numeric: true},
      {title: "wall", value: (r) => r.wall, cell: (r) => escapeHtml(fmtDuration(r.wall)), numeric: true},
      {title: "exit", value: (r) => r.exit, cell: (r) => r.exit === null || r.exit === undefined ? "" :
        `<span title="${escapeHtml(r.reason || "")}">${escapeHtml(r.exit)}</span>`, numeric: true});
    for (const key of params) {
      columns.push({title: shortName(key), full: key, value: (r) => r.params[key] ?? null,
                    cell: (r) => escapeHtml(r.params[key] === undefined ? "" : fmtValue(r.params[key])),
                    numeric: true});
    }
    this.columns = columns;
    this.filters.clear();
    const titles = el("tr", {}, columns.map((c, i) => el("th", {
      title: c.full || c.title, class: c.numeric ? "num sortable" : "sortable",
      onclick: () => { if (c.fixed) return;
                       this.sort = {index: i, descending: this.sort.index === i ? !this.sort.descending : false};
                       this.draw(); }}, c.title)));
    const boxes = el("tr", {class: "filters"}, columns.map((c, i) => el("th", {}, c.fixed ? "" : el("input", {
      type: "search", placeholder: c.numeric ? ">, <, a..b" : "filter", "aria-label": `filter ${c.full || c.title}`,
      "data-column": c.full || c.title,
      oninput: (e) => { const test = parseFilter(e.target.value, c);
                        if (test) this.filters.set(i, test); else this.filters.delete(i); this.draw(); }}))));
    this.head.replaceChildren(titles, boxes);
  }

  trialCell(r) {
    const star = this.pareto.has(r.id) ? ' <span class="pareto" title="on the Pareto front">&#9733;</span>' : "";
    return `<a href="${escapeHtml(runHash(`${this.sweepKey}/trials/${r.id}`))}">${escapeHtml(r.id)}</a>${star}`;
  }

  setRows(rows, pareto) {
    this.rows = rows;
    this.pareto = new Set(pareto);
    this.draw();
  }

  draw() {
    const filters = [...this.filters.entries()];
    const shown = filters.length ? this.rows.filter((r) => filters.every(([, test]) => test(r))) : this.rows.slice();
    const column = this.columns[this.sort.index];
    if (column) {
      const sign = this.sort.descending ? -1 : 1;
      shown.sort((a, b) => {
        const x = column.value(a), y = column.value(b);
        if (x === null || x === undefined) return y === null || y === undefined ? 0 : 1;
        if (y === null || y === undefined) return -1;
        if (typeof x === "number" && typeof y === "number") return sign * (x - y);
        return sign * String(x).localeCompare(String(y), undefined, {numeric: true});
      });
    }
    this.head.querySelectorAll("tr:first-child th").forEach((th, i) => {
      th.classList.toggle("sorted", i === this.sort.index);
      th.classList.toggle("descending", i === this.sort.index && this.sort.descending);
    });
    this.shown = shown;
    this.painted = "";
    this.paint();
    this.count.textContent = `${shown.length} of ${this.rows.length} trials shown`;
  }

  // the rows in view (all of them up to VIRTUAL_FROM), between spacers as high as the rows left out
  paint() {
    const shown = this.shown;
    let first = 0, last = shown.length;
    if (shown.length > VIRTUAL_FROM) {
      first = Math.max(0, Math.floor(this.scroller.scrollTop / ROW_HEIGHT) - MARGIN_ROWS);
      last = Math.min(shown.length, first + Math.ceil(this.scroller.clientHeight / ROW_HEIGHT) + 2 * MARGIN_ROWS);
    }
    const window_ = `${first}:${last}`;
    if (window_ === this.painted) return;
    this.painted = window_;
    const cells = this.columns.map((c) => c.cell);
    const numericColumns = this.columns.map((c) => c.numeric ? ' class="num"' : "");
    const spacer = (rows) => rows ? `<tr class="spacer"><td colspan="${cells.length}" ` +
                                    `style="height:${rows * ROW_HEIGHT}px"></td></tr>` : "";
    this.body.innerHTML = spacer(first) + shown.slice(first, last).map((r) => `<tr data-trial="${escapeHtml(r.id)}">` +
      cells.map((cell, i) => `<td${numericColumns[i]}>${cell(r)}</td>`).join("") + "</tr>").join("") +
      spacer(shown.length - last);
  }
}
