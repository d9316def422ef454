// The traces of one recorded series against another, as `playground plot` draws them
// (playground/outputs/plots.py): a test metric's full test passes as a line with markers, its interval points (a
// few test batches each) as small faint dots; any other series as a line.
const PALETTE = ["#1f77b4", "#ff7f0e", "#2ca02c", "#d62728", "#9467bd", "#8c564b", "#e377c2", "#7f7f7f",
                 "#bcbd22", "#17becf"];

export function color(index) { return PALETTE[index % PALETTE.length]; }

function finite(value) { return typeof value === "number" && Number.isFinite(value); }

export function seriesTraces(records, xName, yName, isTest, name, colour) {
  const points = records.filter((r) => finite(r[xName]) && finite(r[yName]));
  if (!points.length) return [];
  const line = {color: colour};
  if (isTest && points.some((r) => r.kind === "epoch")) {
    const full = points.filter((r) => r.kind === "epoch");
    const interval = points.filter((r) => r.kind !== "epoch");
    const traces = [{x: full.map((r) => r[xName]), y: full.map((r) => r[yName]), mode: "lines+markers",
                     name: `${name} (full test pass)`, line, marker: {color: colour}, type: "scatter"}];
    if (interval.length) {
      traces.push({x: interval.map((r) => r[xName]), y: interval.map((r) => r[yName]), mode: "markers",
                   name: `${name} (interval)`, marker: {color: colour, size: 4, opacity: 0.35}, type: "scatter"});
    }
    return traces;
  }
  return [{x: points.map((r) => r[xName]), y: points.map((r) => r[yName]), type: "scatter", name, line,
           mode: points.length < 50 ? "lines+markers" : "lines", marker: {color: colour, size: 5}}];
}

// the numeric series of the records, in first-seen order (what a chart can draw)
export function seriesNames(records) {
  const names = new Set();
  for (const record of records) {
    for (const [key, value] of Object.entries(record)) {
      if (key !== "index" && finite(value)) names.add(key);
    }
  }
  return [...names];
}

export function testMetrics(opts) {
  const metrics = ((opts || {}).output || {}).metrics || [];
  return new Set(metrics.filter((m) => m && m.is_train === false).map((m) => m.name));
}
