// #/sweep/KEY : one sweep: its state and budget, pause and resume (with --allow-actions), the best trial or the
// Pareto front, the trials table, learning curves with ASHA's rungs, parallel coordinates and importances. Only
// the rows and curves that changed come with each poll.
import {compareHash, el, fmtDuration, fmtNum, fmtTime, fmtValue, getJson, link, poll, postAction, runHash,
        section, stateBadge} from "./common.js";
import {drawCurves, drawImportances, drawParallel, drawPareto} from "./sweep_charts.js";
import {TrialsTable} from "./trials_table.js";

const IMPORTANCE_SECONDS = 5;

export function mountSweep(main, key) {
  const have = {version: 0, rows: new Map(), curveVersion: 0, curves: {}, metric: null, header: null,
                importancesAt: 0, importanceTrials: -1, drawn: {table: -1, charts: -1, curves: -1, curvesKey: ""}};
  const title = el("h1", {}, key);
  const facts = el("div", {class: "facts"});
  const actions = el("div", {class: "actions"});
  const best = el("div", {class: "best", id: "best"});
  const compare = el("button", {disabled: true}, "compare the ticked trials");
  const table = new TrialsTable(key, (ticked) => { compare.disabled = ticked.size < 2 || ticked.size > 10; });
  compare.addEventListener("click", () => {
    location.hash = compareHash([...table.ticked].map((id) => `${key}/trials/${id}`));
  });
  const metricPick = el("select", {"aria-label": "curve metric", id: "curve-metric"});
  const curves = el("div", {class: "chart", id: "curves"});
  const parallel = el("div", {class: "chart", id: "parallel"});
  const importances = el("div", {class: "chart", id: "importances"});
  const pareto = el("div", {class: "chart", id: "pareto"});
  const paretoSection = section("Pareto front", pareto);
  paretoSection.hidden = true;
  metricPick.addEventListener("change", () => {
    have.metric = metricPick.value; have.curveVersion = 0; have.curves = {}; have.drawn.curvesKey = "";
  });
  main.append(title, facts, actions, section("Best", best), paretoSection,
              section("Trials", el("div", {class: "toolbar"}, compare), table.node),
              section("Learning curves", metricPick, curves),
              section("Parallel coordinates", parallel),
              section("Parameter importances", importances));

  const said = el("span", {class: "note", id: "action-result"});
  function showActions(data) {
    if (!data.allow_actions) return;
    const paused = data.state === "paused" || data.state === "pausing";
    const wanted = paused ? "resume" : "pause";
    if (actions.dataset.action === wanted) return;
    actions.dataset.action = wanted;
    const button = el("button", {id: `${wanted}-sweep`}, wanted === "pause" ?
      "pause (running trials checkpoint and stop)" : "resume (then re-run `sweep run`)");
    button.addEventListener("click", async () => {
      button.disabled = true;
      said.textContent = `${wanted}...`;
      const answer = await postAction(wanted, key);
      said.textContent = answer.message;
      button.disabled = false;
    });
    actions.replaceChildren(button, " ", said);
  }

  function showHeader(data) {
    title.textContent = data.name;
    const spec = data.spec;
    facts.replaceChildren(stateBadge(data.state),
      el("span", {}, `${spec.searcher.name || "?"} searcher`),
      el("span", {id: "trial-total"}, data.budget ? `${data.trials} of ${data.budget} trials` : `${data.trials} trials`),
      el("span", {}, Object.entries(data.counts).map(([s, n]) => `${n} ${s}`).join(", ")),
      el("span", {}, `objective ${spec.objectives.map((o) => `${o.metric} (${o.mode})`).join(", ") || "none"}`),
      el("span", {}, `started ${fmtTime(data.started)}`), el("span", {}, `length ${fmtDuration(data.length)}`),
      data.agents.length ? el("span", {}, `agents ${data.agents.join(", ")}`) : "",
      spec.note ? el("span", {class: "note"}, spec.note) : "");
    if (spec.objectives.length > 1) {
      best.replaceChildren(el("p", {}, `${data.pareto.length} trial(s) on the Pareto front` +
                                       (data.pareto_note ? ` (${data.pareto_note})` : "")),
        el("ul", {}, data.pareto.map((id) => { const r = have.rows.get(id) || {values: []};
          return el("li", {}, link(runHash(`${key}/trials/${id}`), id), ": ",
                    spec.objectives.map((o, i) => `${o.metric} ${fmtNum(r.values[i])}`).join(", ")); })));
    } else if (data.best) {
      const b = data.best;
      best.replaceChildren(el("p", {}, "trial ", link(runHash(`${key}/trials/${b.trial}`), b.trial),
                                       `: ${b.metric} ${fmtNum(b.value)} (${b.mode})`),
        el("ul", {}, Object.entries(b.params).map(([k, v]) => el("li", {}, `${k} = ${fmtValue(v)}`))));
    } else {
      best.replaceChildren(el("p", {class: "note"}, "no complete trial yet"));
    }
  }

  function takeCurves(data) {
    if (data.metric !== have.metric || data.since === 0) { have.metric = data.metric; have.curves = {}; }
    Object.assign(have.curves, data.curves);
    have.curveVersion = data.version;
    const drawn = `${data.ids.join()}|${Object.keys(data.curves).length ? data.version : have.drawn.curves}`;
    if (drawn === have.drawn.curvesKey) return null;
    have.drawn.curvesKey = drawn;
    have.drawn.curves = data.version;
    return drawCurves(curves, have.curves, data.ids, have.rows, have.header.rungs, have.metric, data.x,
                      data.trials);
  }

  async function refreshImportances(complete) {
    const now = Date.now() / 1000;
    if (complete === have.importanceTrials || now - have.importancesAt < IMPORTANCE_SECONDS) return;
    have.importancesAt = now;
    have.importanceTrials = complete;
    await drawImportances(importances, await getJson("/api/importances", {key}));
  }

  return poll(async () => {
    const [data, curveData] = await Promise.all([
      getJson("/api/sweep", {key, since: have.version}),
      getJson("/api/curves", {key, since: have.curveVersion, metric: have.metric || ""})]);
    if (data.since === 0) have.rows = new Map();
    for (const row of data.rows) have.rows.set(row.id, row);
    have.header = data;
    showHeader(data);
    showActions(data);
    const metrics = data.curve_metrics;
    if ([...metricPick.options].map((o) => o.value).join() !== metrics.join()) {
      metricPick.replaceChildren(...metrics.map((m) => el("option", {value: m}, m)));
      if (have.metric) metricPick.value = have.metric;
    }
    const rows = [...have.rows.values()].sort((a, b) => (a.number ?? 0) - (b.number ?? 0));
    const spec = data.spec;
    if (data.rows.length || have.drawn.table < 0) {
      table.setColumns(spec.objectives, spec.space.map((p) => p.key));
      table.setRows(rows, data.pareto);
      have.drawn.table = data.version;
    }
    const curvesDrawn = Promise.resolve(takeCurves(curveData));
    const drawing = [curvesDrawn];
    if (have.drawn.charts !== data.version) {
      have.drawn.charts = data.version;
      drawing.push(drawParallel(parallel, rows, spec));
      paretoSection.hidden = spec.objectives.length < 2;
      if (spec.objectives.length >= 2) drawing.push(drawPareto(pareto, rows, spec, data.pareto));
    }
    have.version = data.version;
    const complete = rows.filter((r) => r.state === "complete").length;
    drawing.push(curvesDrawn.then(() => refreshImportances(complete)));   // the server's longest work, asked last
    await Promise.all(drawing);
  }, 1000);
}
