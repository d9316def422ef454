// #/ : every sweep and run under the served folders, with state, start, length, best value and exit; runs can be
// ticked (2 to 10) and compared.
import {compareHash, el, fmtBest, fmtDuration, fmtTime, getJson, link, poll, runHash, section, stateBadge,
        sweepHash} from "./common.js";
import {KeyedTable} from "./keyed_table.js";

const MAX_COMPARED = 10;

function counts(sweep) {
  const parts = Object.entries(sweep.counts).sort((a, b) => b[1] - a[1]).map(([state, n]) => `${n} ${state}`);
  return parts.join(", ");
}

export function mountList(main) {
  const selected = new Set();
  const compare = el("button", {disabled: true}, "compare the ticked runs");
  const why = el("span", {class: "note"}, "tick 2 to 10 runs to compare them");
  compare.addEventListener("click", () => { location.hash = compareHash([...selected]); });
  function ticked(key, on) {
    if (on) selected.add(key); else selected.delete(key);
    compare.disabled = selected.size < 2 || selected.size > MAX_COMPARED;
    why.textContent = `${selected.size} ticked` + (selected.size > MAX_COMPARED ? ` (at most ${MAX_COMPARED})` : "");
  }
  const sweeps = new KeyedTable([
    {title: "sweep", cell: (s) => link(sweepHash(s.key), s.name)},
    {title: "state", cell: (s) => stateBadge(s.state)},
    {title: "searcher", cell: (s) => s.searcher || ""},
    {title: "trials", cell: (s) => s.budget ? `${s.trials} of ${s.budget}` : String(s.trials), class: "num"},
    {title: "by state", cell: counts},
    {title: "best", cell: (s) => fmtBest(s.best)},
    {title: "started", cell: (s) => fmtTime(s.started)},
    {title: "length", cell: (s) => fmtDuration(s.length), class: "num"},
  ], (s) => s.key, "no sweep folder (one holding sweep.json) under the served folders");
  const runs = new KeyedTable([
    {title: "", cell: (r) => el("input", {type: "checkbox", "aria-label": `compare ${r.name}`,
                                          checked: selected.has(r.key),
                                          onchange: (e) => ticked(r.key, e.target.checked)})},
    {title: "run", cell: (r) => link(runHash(r.key), r.name)},
    {title: "state", cell: (r) => stateBadge(r.state)},
    {title: "exit", cell: (r) => r.exit === null || r.exit === undefined ? "" : String(r.exit), class: "num"},
    {title: "started", cell: (r) => fmtTime(r.started)},
    {title: "length", cell: (r) => fmtDuration(r.length), class: "num"},
    {title: "best", cell: (r) => fmtBest(r.best)},
    {title: "records", cell: (r) => String(r.records), class: "num"},
  ], (r) => r.key, "no run folder (one holding opts.json or metrics.jsonl) under the served folders");
  const roots = el("p", {class: "note"});
  main.append(roots, section("Sweeps", sweeps.node),
              section("Runs", el("div", {class: "toolbar"}, compare, " ", why), runs.node));
  return poll(async () => {
    const data = await getJson("/api/list");
    roots.textContent = `serving ${data.roots.join(", ")}` +
                        (data.allow_actions ? " (actions on)" : "");
    sweeps.update(data.sweeps);
    runs.update(data.runs);
  }, 1500);
}
