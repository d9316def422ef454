// The page's router: #/ (runs and sweeps), #/run/KEY, #/sweep/KEY, #/compare/KEY,KEY,... Each page module's
// mount(main, args) draws it and returns {stop()}, called when the reader goes to another page.
import {link, plotly} from "./common.js";
import {mountList} from "./list.js";
import {mountRun} from "./run.js";
import {mountSweep} from "./sweep.js";
import {mountCompare} from "./compare.js";

let current = null;

function route() {
  if (current) current.stop();
  const main = document.getElementById("main");
  const crumbs = document.getElementById("crumbs");
  main.replaceChildren();
  crumbs.replaceChildren();
  const [, page = "", rest = ""] = location.hash.match(/^#\/([a-z]*)\/?(.*)$/) || [];
  const keys = rest ? rest.split(",").map(decodeURIComponent) : [];
  if (page === "run" && keys.length === 1) {
    crumbs.append(link("#/", "all"), " / run");
    current = mountRun(main, keys[0]);
  } else if (page === "sweep" && keys.length === 1) {
    crumbs.append(link("#/", "all"), " / sweep");
    current = mountSweep(main, keys[0]);
  } else if (page === "compare") {
    crumbs.append(link("#/", "all"), ` / compare ${keys.length} runs`);
    current = mountCompare(main, keys);
  } else {
    current = mountList(main);
  }
}

window.addEventListener("hashchange", route);
plotly();  // starts loading the charts' library beside the first page's requests
route();   // a module script runs once the document is parsed
