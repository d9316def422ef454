// #/compare/KEY,KEY,... : 2 to 10 runs side by side: the opts that differ, and the curves of the series picked
// overlaid (one chart per series, a colour per run), following the runs as they write.
import {chart, el, fmtBest, fmtValue, getJson, link, poll, runHash, section} from "./common.js";
import {KeyedTable} from "./keyed_table.js";
import {color, seriesNames, seriesTraces} from "./series.js";

export function mountCompare(main, keys) {
  const runs = keys.map((key) => ({key, records: [], generation: -1, name: key, tests: new Set()}));
  const picked = new Set();
  const heading = el("h1", {}, `${keys.length} runs`);
  const legend = el("ul", {class: "legend"});
  const same = el("p", {class: "note"});
  const diff = new KeyedTable([
    {title: "opts key", cell: (d) => d.key},
    ...keys.map((key, i) => ({title: `run ${i + 1}`, cell: (d) => fmtValue(d.values[i])})),
  ], (d) => d.key, "the opts are the same");
  diff.table.id = "opts-diff";
  const picker = el("div", {class: "picker"});
  const charts = el("div", {class: "charts", id: "compare-charts"});
  main.append(heading, legend, section("Curves", picker, charts), section("Opts that differ", same, diff.node));

  let described = false;
  let drawn = "";
  function draw() {
    const names = [...new Set(runs.flatMap((r) => seriesNames(r.records)))].filter((n) => n !== "epochs");
    if (!picked.size) {
      const tests = [...new Set(runs.flatMap((r) => [...r.tests]))].filter((n) => names.includes(n));
      (tests.length ? tests : names.slice(0, 1)).slice(0, 2).forEach((n) => picked.add(n));
    }
    if ([...picker.querySelectorAll("input")].map((i) => i.value).join() !== names.join()) {
      picker.replaceChildren(...names.map((name) => el("label", {}, el("input", {
        type: "checkbox", value: name, checked: picked.has(name),
        onchange: (e) => { if (e.target.checked) picked.add(name); else picked.delete(name); drawn = ""; draw(); }}),
        name)));
    }
    const metrics = [...picked];
    while (charts.children.length > metrics.length) charts.lastChild.remove();
    while (charts.children.length < metrics.length) charts.append(el("div", {class: "chart"}));
    metrics.forEach((metric, m) => {
      const traces = runs.flatMap((run, i) => seriesTraces(run.records, "epochs", metric, run.tests.has(metric),
                                                           `run ${i + 1}`, color(i)));
      chart(charts.children[m], traces, {title: {text: metric}, xaxis: {title: {text: "epochs"}}});
    });
  }

  return poll(async () => {
    if (!described) {
      const data = await getJson("/api/compare", {keys: keys.join(",")});
      data.runs.forEach((r, i) => { runs[i].name = r.name; runs[i].tests = new Set(r.metrics); });
      legend.replaceChildren(...data.runs.map((r, i) => el("li", {}, el("span", {class: "swatch",
        style: `background:${color(i)}`}), `run ${i + 1}: `, link(runHash(r.key), r.name),
        r.best ? ` (best ${fmtBest(r.best)})` : "")));
      same.textContent = `${data.diff.length} opts key(s) differ; ${data.same} are the same in all`;
      diff.update(data.diff);
      described = true;
    }
    for (const run of runs) {
      const data = await getJson("/api/run", {key: run.key, since: run.records.length, gen: run.generation,
                                              brief: 1});
      if (data.records_from === 0) run.records = data.records; else run.records.push(...data.records);
      run.generation = data.generation;
    }
    const now = runs.map((r) => `${r.generation}:${r.records.length}`).join();
    if (now !== drawn) { drawn = now; draw(); }
  }, 1000);
}
