// #/run/KEY : one run: its state, the charts of its output.plots and of any series picked, its checkpoints, the
// log that follows, its opts. New records, log lines and checkpoints appear as the run writes them.
import {chart, el, fileUrl, fmtBest, fmtBytes, fmtDuration, fmtNum, fmtTime, getJson, link, poll, postAction,
        section, stateBadge, sweepHash} from "./common.js";
import {KeyedTable} from "./keyed_table.js";
import {color, seriesNames, seriesTraces, testMetrics} from "./series.js";

const LOG_LINES_KEPT = 5000;

export function mountRun(main, key) {
  const have = {records: [], generation: -1, version: -1, log: 0, logname: null, opts: null, drawn: ""};
  const title = el("h1", {}, key);
  const facts = el("div", {class: "facts"});
  const actions = el("div", {class: "actions"});
  const charts = el("div", {class: "charts"});
  const picker = el("div", {class: "picker"});
  const picked = new Set();
  const anyChart = el("div", {class: "chart", id: "series-chart"});
  const logBox = el("pre", {class: "log", id: "log"});
  const logPick = el("select", {"aria-label": "log file"});
  const optsBox = el("pre", {class: "opts", id: "opts"});
  const images = el("div", {class: "images"});
  const checkpoints = new KeyedTable([
    {title: "file", cell: (c) => c.url ? el("a", {href: c.url}, c.file) : c.file},
    {title: "epoch", cell: (c) => c.epoch ?? "", class: "num"},
    {title: "kind", cell: (c) => c.kind || ""},
    {title: "size", cell: (c) => fmtBytes(c.size), class: "num"},
    {title: "written", cell: (c) => fmtTime(c.time)},
    {title: "pointers", cell: (c) => [c.last ? "last" : "", c.best ? "best" : ""].filter(Boolean).join(", ")},
    {title: "metrics", cell: (c) => Object.entries(c.metrics || {}).filter(([, v]) => v !== null)
                                          .map(([k, v]) => `${k} ${fmtNum(v)}`).join(", ")},
  ], (c) => c.file, "no checkpoint yet");
  const checkpointNote = el("p", {class: "note"});
  logPick.addEventListener("change", () => { have.logname = logPick.value; have.log = 0; logBox.textContent = ""; });
  main.append(title, facts, actions,
              section("Charts", charts, el("h3", {}, "any series: tick to draw"), picker, anyChart),
              section("Checkpoints", checkpointNote, checkpoints.node),
              section("Log", logPick, logBox),
              section("Opts", optsBox),
              images);

  function drawCharts() {
    const records = have.records;
    const tests = testMetrics(have.opts);
    const specs = (((have.opts || {}).output || {}).plots || []).filter((s) => s && Array.isArray(s.ys));
    const names = seriesNames(records);
    if (!specs.length && !picked.size) tests.forEach((name) => names.includes(name) && picked.add(name));
    while (charts.children.length < specs.length) charts.append(el("div", {class: "chart"}));
    specs.forEach((spec, index) => {
      const x = spec.x || "epochs";
      const traces = spec.ys.flatMap((y, i) => seriesTraces(records, x, y, tests.has(y), y, color(i)));
      chart(charts.children[index], traces, {title: {text: spec.y_title || spec.ys.join(", ")},
                                             xaxis: {title: {text: spec.x_title || x}}});
    });
    const shown = [...picker.querySelectorAll("input")].map((i) => i.value).join(",");
    if (shown !== names.join(",")) {
      picker.replaceChildren(...names.filter((n) => n !== "epochs").map((name) => el("label", {},
        el("input", {type: "checkbox", value: name, checked: picked.has(name),
                     onchange: (e) => { if (e.target.checked) picked.add(name); else picked.delete(name);
                                        drawCharts(); }}), name)));
    }
    anyChart.hidden = !picked.size;
    if (!picked.size) return;
    const traces = [...picked].flatMap((y, i) => seriesTraces(records, "epochs", y, tests.has(y), y, color(i)));
    chart(anyChart, traces, {title: {text: [...picked].join(", ")}, xaxis: {title: {text: "epochs"}}});
  }

  function showFiles(data) {
    have.opts = data.opts && data.opts.opts ? data.opts.opts : data.opts;
    optsBox.textContent = data.opts ? JSON.stringify(data.opts, null, 2) : "(no opts.json)";
    const cp = data.checkpoints;
    checkpointNote.textContent = cp.served ? `in ${cp.folder}` :
      `in ${cp.folder}, outside the served folders: not listed`;
    checkpoints.update(cp.items.map((c) => ({...c, url: cp.key ? fileUrl(`${cp.key}/${c.file}`) : null})).reverse());
    images.replaceChildren(...(data.images.length ? [el("h2", {}, "Plots written by the run")] : []),
                           ...data.images.map((name) => el("figure", {}, el("img", {src: fileUrl(`${key}/${name}`),
                                                                                      alt: name, loading: "lazy"}),
                                                            el("figcaption", {}, name))));
    title.replaceChildren(...(data.sweep ? [`trial ${data.name.split("/").pop()} of sweep `,
                                            link(sweepHash(data.sweep.key), data.sweep.name)] : [data.name]));
  }

  function showFacts(data) {
    facts.replaceChildren(stateBadge(data.state),
                          data.exit !== null && data.exit !== undefined ? el("span", {}, `exit ${data.exit}`) : "",
                          data.pid ? el("span", {}, `pid ${data.pid}`) : "",
                          el("span", {}, `started ${fmtTime(data.started)}`),
                          el("span", {}, `length ${fmtDuration(data.length)}`),
                          data.best ? el("span", {}, `best ${fmtBest(data.best)} (${data.best.mode})`) : "",
                          el("span", {id: "record-count"}, `${have.records.length} records`));
    if (data.can_stop && !actions.querySelector("button")) {
      const stop = el("button", {id: "stop-run"}, "stop (checkpoint, then exit 75)");
      const said = el("span", {class: "note", id: "action-result"});
      stop.addEventListener("click", async () => {
        stop.disabled = true;
        const answer = await postAction("stop", key);
        said.textContent = answer.message;
      });
      actions.replaceChildren(stop, " ", said);
    } else if (!data.can_stop && actions.querySelector("button")) {
      actions.querySelector("button").disabled = true;
    }
  }

  function showLog(log) {
    if (log.name !== have.logname || log.last < have.log) {
      logBox.textContent = "";
      have.log = 0;
    }
    have.logname = log.name;
    if (logPick.options.length !== log.available.length) {
      logPick.replaceChildren(...log.available.map((n) => el("option", {value: n}, n)));
    }
    logPick.value = log.name || "";
    logPick.hidden = log.available.length < 2;
    if (!log.name) { logBox.textContent = "(no log)"; return; }
    if (log.lines.length) {
      const following = logBox.scrollTop + logBox.clientHeight >= logBox.scrollHeight - 8;
      logBox.append(log.lines.join("\n") + "\n");
      while (logBox.childNodes.length > LOG_LINES_KEPT / 100) logBox.firstChild.remove();
      if (following) logBox.scrollTop = logBox.scrollHeight;
    }
    have.log = log.last;
  }

  return poll(async () => {
    const data = await getJson("/api/run", {key, since: have.records.length, gen: have.generation, v: have.version,
                                            log: have.log, ...(have.logname ? {logname: have.logname} : {})});
    if (data.records_from === 0) have.records = data.records;
    else have.records.push(...data.records);
    have.generation = data.generation;
    if (data.opts !== undefined) { showFiles(data); have.version = data.version; have.drawn = ""; }
    showFacts(data);
    showLog(data.log);
    const drawn = `${have.generation}:${have.records.length}`;
    if (drawn !== have.drawn) { have.drawn = drawn; drawCharts(); }
  }, 1000);
}
