// A small table that updates in place: rows keyed by `key(item)`, a row rebuilt only when its item changed, so a
// poll never replaces the checkbox a reader is clicking. For the few-hundred-row tables (runs, sweeps,
// checkpoints, opts differences); the trials table of a sweep has its own (trials_table.js).
import {el} from "./common.js";

export class KeyedTable {
  // columns: [{title, cell(item) -> node or text, class}]
  constructor(columns, key, empty = "none yet") {
    this.columns = columns;
    this.key = key;
    this.rows = new Map();
    this.body = el("tbody");
    this.empty = el("p", {class: "note"}, empty);
    this.table = el("table", {class: "grid"},
                    el("thead", {}, el("tr", {}, columns.map((c) => el("th", {class: c.class}, c.title)))),
                    this.body);
    this.node = el("div", {}, this.table, this.empty);
  }

  update(items) {
    const seen = new Set();
    let previous = null;
    for (const item of items) {
      const key = this.key(item);
      seen.add(key);
      const signature = JSON.stringify(item);
      let entry = this.rows.get(key);
      if (!entry || entry.signature !== signature) {
        const row = el("tr", {"data-key": key},
                       this.columns.map((c) => el("td", {class: c.class}, c.cell(item))));
        if (entry) entry.row.replaceWith(row);
        entry = {row, signature};
        this.rows.set(key, entry);
      }
      const wanted = previous ? previous.nextSibling : this.body.firstChild;
      if (wanted !== entry.row) this.body.insertBefore(entry.row, wanted);
      previous = entry.row;
    }
    for (const [key, entry] of this.rows) {
      if (!seen.has(key)) { entry.row.remove(); this.rows.delete(key); }
    }
    this.table.hidden = items.length === 0;
    this.empty.hidden = items.length !== 0;
  }
}
