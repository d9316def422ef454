// The charts of a sweep's page: learning curves of all trials with adaptive ASHA's rungs marked, parallel
// coordinates, parameter importances and the Pareto front of a several-objective sweep.
import {chart, escapeHtml, fmtNum} from "./common.js";
import {color} from "./series.js";

function finished(row) { return row.values && row.values.length && typeof row.values[0] === "number"; }

const COLOURS = 10;   // trial i is drawn in colour i % COLOURS: one trace per colour, whatever the number of trials

// the curves of `selected` (the server's choice: every trial, or the running and best ones of a large sweep). The
// trials of one colour share a trace, their curves apart (a null between two), each point naming its trial: a
// chart of 200 trials is 10 traces, drawn in a tenth of the time 200 would take. A trial of one point is a marker.
export function drawCurves(div, curves, selected, byId, rungs, metric, xName, total) {
  const ids = selected.filter((id) => curves[id] && curves[id].x.length);
  const drawn = new Set(ids);
  const groups = Array.from({length: Math.min(COLOURS, ids.length)}, () => ({x: [], y: [], text: []}));
  const single = {x: [], y: [], text: [], colours: []};
  ids.forEach((id, i) => {
    const curve = curves[id];
    const label = `${escapeHtml(id)} (${escapeHtml((byId.get(id) || {}).state || "")})`;
    const into = curve.x.length === 1 ? single : groups[i % COLOURS];
    into.x.push(...curve.x, null);
    into.y.push(...curve.y, null);
    into.text.push(...curve.x.map(() => label), "");
    if (into === single) single.colours.push(color(i), color(i));
  });
  const hover = `%{text}<br>${escapeHtml(xName)} %{x}<br>${escapeHtml(metric)} %{y}<extra></extra>`;
  const traces = groups.map((g, i) => ({x: g.x, y: g.y, text: g.text, type: "scatter", mode: "lines",
                                        name: `trials (colour ${i + 1})`, connectgaps: false,
                                        line: {width: 1.2, color: color(i)}, hovertemplate: hover}));
  traces.push({x: single.x, y: single.y, text: single.text, type: "scatter", mode: "markers", name: "one pass",
               marker: {size: 5, color: single.colours}, hovertemplate: hover});
  const shapes = [], annotations = [];
  if (rungs && rungs.time_metric && xName === (rungs.time_metric === "iteration" ? "iteration" :
                                               rungs.time_metric === "samples" ? "samples" : "epochs")) {
    const positions = [...new Set(rungs.units.flat())].sort((a, b) => a - b);
    positions.forEach((at) => {
      shapes.push({type: "line", xref: "x", yref: "paper", x0: at, x1: at, y0: 0, y1: 1,
                   line: {dash: "dot", width: 1, color: "#888"}});
      annotations.push({x: at, y: 1, xref: "x", yref: "paper", yanchor: "bottom", showarrow: false,
                        text: `rung ${at}`, font: {size: 10, color: "#555"}});
    });
    const xs = [], ys = [], texts = [];
    for (const [id, reached] of Object.entries(rungs.reached)) {
      const curve = curves[id];
      if (!curve || !drawn.has(id)) continue;
      for (const [bracket, rung] of reached) {
        const at = rungs.units[bracket][rung];
        const index = curve.x.findIndex((x) => x >= at - 1e-9);
        if (index < 0) continue;
        xs.push(curve.x[index]); ys.push(curve.y[index]);
        texts.push(`${escapeHtml(id)} reached rung ${rung + 1} of bracket ${bracket + 1}`);
      }
    }
    traces.push({x: xs, y: ys, text: texts, type: "scatter", mode: "markers", name: "reached a rung",
                 marker: {symbol: "diamond-open", size: 9, color: "#000"}, hoverinfo: "text"});
  }
  const shown = ids.length < total ? ` (the running and best ${ids.length} of ${total} trials)` : "";
  return chart(div, traces, {title: {text: `${metric}, full test passes${shown}`}, showlegend: false, shapes,
                             annotations, xaxis: {title: {text: xName}}, yaxis: {title: {text: metric}}})
    .then(() => { div.dataset.trials = String(ids.length); });   // drawn: how many trials' curves
}

function logScale(values) { return values.every((v) => typeof v === "number" && v > 0); }

// one axis of the parallel coordinates: where each value sits (0 to 1) and the axis's tick labels
function axis(param, column) {
  const label = param.key.split(".").pop();
  if (column.every((v) => typeof v === "number")) {
    const log = param.log && logScale(column);
    const x = log ? column.map(Math.log10) : column;
    const lo = Math.min(...x), hi = Math.max(...x), span = hi - lo || 1;
    const ticks = [0, 0.25, 0.5, 0.75, 1].map((p) => ({at: p, text: fmtNum(log ? 10 ** (lo + p * span) : lo + p * span)}));
    return {label, positions: x.map((v) => (v - lo) / span), ticks};
  }
  const labels = [...new Set(column.map((v) => JSON.stringify(v)))].sort();
  const step = Math.max(labels.length - 1, 1);
  return {label, positions: column.map((v) => labels.indexOf(JSON.stringify(v)) / step),
          ticks: labels.map((text, i) => ({at: i / step, text}))};
}

const BANDS = 8;   // lines are drawn in this many colour bands: a trace per band, whatever the number of trials

// parallel coordinates drawn as plain lines (no WebGL, which a browser without a GPU may lack): an axis per
// sampled parameter and one for the objective, a line per finished trial coloured by its value
export function drawParallel(div, rows, spec) {
  const done = rows.filter((r) => r.final && finished(r));
  const objective = spec.objectives[0];
  if (!done.length || !objective) {
    return chart(div, [], {title: {text: "parallel coordinates: no finished trial yet"}, height: 120,
                           xaxis: {visible: false}, yaxis: {visible: false}});
  }
  const values = done.map((r) => r.values[0]);
  const axes = spec.space.map((p) => axis(p, done.map((r) => r.params[p.key])));
  axes.push(axis({key: objective.metric}, values));
  const lo = Math.min(...values), hi = Math.max(...values), span = hi - lo || 1;
  const bands = Array.from({length: BANDS}, () => ({x: [], y: []}));
  done.forEach((row, i) => {
    const share = (values[i] - lo) / span;
    const good = objective.mode === "max" ? share : 1 - share;    // 1: the best value
    const band = bands[Math.min(Math.floor(good * BANDS), BANDS - 1)];
    axes.forEach((a, k) => { band.x.push(k); band.y.push(a.positions[i]); });
    band.x.push(null); band.y.push(null);
  });
  // Viridis from worst (purple) to best (yellow); the colour bar reads the objective's values
  const colours = ["#440154", "#46327e", "#365c8d", "#277f8e", "#1fa187", "#4ac16d", "#a0da39", "#fde725"];
  const traces = bands.map((band, b) => ({x: band.x, y: band.y, type: "scatter", mode: "lines", hoverinfo: "skip",
                                           showlegend: false, line: {width: 1, color: colours[b]}, opacity: 0.8}));
  traces.push({x: [null], y: [null], type: "scatter", mode: "markers", showlegend: false, hoverinfo: "skip",
               marker: {color: [lo, hi], colorscale: "Viridis", reversescale: objective.mode !== "max", cmin: lo,
                        cmax: hi, showscale: true, colorbar: {title: {text: objective.metric}}}});
  const annotations = axes.flatMap((a, k) => [
    {x: k, y: 1.08, xref: "x", yref: "y", text: `<b>${escapeHtml(a.label)}</b>`, showarrow: false, font: {size: 11}},
    ...a.ticks.map((t) => ({x: k, y: t.at, xref: "x", yref: "y", text: escapeHtml(t.text), showarrow: false,
                            xanchor: "left", xshift: 4, font: {size: 9, color: "#444"}}))]);
  const shapes = axes.map((_, k) => ({type: "line", x0: k, x1: k, y0: 0, y1: 1, xref: "x", yref: "y",
                                      line: {color: "#333", width: 1}}));
  return chart(div, traces, {title: {text: `parallel coordinates of ${done.length} finished trials (colour: ` +
                                           `${escapeHtml(objective.metric)}, yellow is best)`},
                             annotations, shapes, showlegend: false, height: 380,
                             xaxis: {visible: false, range: [-0.2, axes.length - 0.6]},
                             yaxis: {visible: false, range: [-0.05, 1.15]}, margin: {l: 20, r: 20, t: 50, b: 10}});
}

export function drawImportances(div, data) {
  const names = Object.keys(data.importances || {});
  if (!names.length) {
    return chart(div, [], {title: {text: data.note || "parameter importances"}, height: 120,
                           xaxis: {visible: false}, yaxis: {visible: false}});
  }
  const ordered = names.slice().reverse();
  return chart(div, [{type: "bar", orientation: "h", y: ordered.map((n) => n.split(".").pop()),
                      x: ordered.map((n) => data.importances[n]), hovertext: ordered, hoverinfo: "text+x"}],
               {title: {text: `parameter importances (${data.trials} complete trials)`},
                height: 120 + 40 * names.length, margin: {l: 160, r: 20, t: 36, b: 40}});
}

export function drawPareto(div, rows, spec, front) {
  const [a, b] = spec.objectives;
  const done = rows.filter((r) => r.final && r.values && r.values.length >= 2 && r.values.every((v) => typeof v === "number"));
  const onFront = new Set(front);
  const frontRows = done.filter((r) => onFront.has(r.id)).sort((p, q) => p.values[0] - q.values[0]);
  const others = done.filter((r) => !onFront.has(r.id));
  const point = (r) => `${escapeHtml(r.id)}<br>${escapeHtml(a.metric)} ${fmtNum(r.values[0])}<br>` +
                       `${escapeHtml(b.metric)} ${fmtNum(r.values[1])}`;
  const traces = [
    {x: others.map((r) => r.values[0]), y: others.map((r) => r.values[1]), text: others.map(point), type: "scatter",
     mode: "markers", name: "other trials", marker: {color: "#aaa", size: 7}, hoverinfo: "text"},
    {x: frontRows.map((r) => r.values[0]), y: frontRows.map((r) => r.values[1]), text: frontRows.map(point),
     type: "scatter", mode: "lines+markers", name: "Pareto front", line: {color: "#d62728"},
     marker: {color: "#d62728", size: 9}, hoverinfo: "text"},
  ];
  const more = spec.objectives.length > 2 ? ` (first two of ${spec.objectives.length} objectives)` : "";
  return chart(div, traces, {title: {text: `Pareto front: ${front.length} of ${done.length} finished trials${more}`},
                             xaxis: {title: {text: `${a.metric} (${a.mode})`}},
                             yaxis: {title: {text: `${b.metric} (${b.mode})`}}});
}
