// The report's own script: every value comes from the JSON block and reaches the page as text
// (textContent, attributes set one by one), never as markup.
"use strict";
(() => {
  const DATA = JSON.parse(document.getElementById("report-data").textContent);
  const SEVERITIES = ["error", "warning", "info"];
  const byId = (id) => document.getElementById(id);

  function el(tag, attributes, ...children) {
    const node = document.createElement(tag);
    for (const [name, value] of Object.entries(attributes || {})) {
      if (value !== null && value !== undefined && value !== false) node.setAttribute(name, String(value));
    }
    for (const child of children) {
      if (child === null || child === undefined) continue;
      node.append(child instanceof Node ? child : String(child));
    }
    return node;
  }
  const fixed = (value, digits) => (value === null || value === undefined ? "-" : Number(value).toFixed(digits));
  const label = (value) => (value === null || value === undefined || value === "" ? "-" : String(value));

  function counts(findings) {
    const span = el("span", {});
    for (const severity of SEVERITIES) {
      if (findings[severity]) {
        span.append(el("span", {class: `count ${severity}`, title: `${findings[severity]} ${severity}`}, findings[severity]));
      }
    }
    return span;
  }

  // -- the header
  byId("verdict").textContent = DATA.verdict;
  byId("verdict").classList.add(DATA.verdict);
  byId("about").textContent =
    `${DATA.target} · ruleset ${DATA.ruleset} · mlperf-logging ${DATA.mlperf_logging} · mlperf-audit ${DATA.tool_version}`;
  byId("summary").textContent =
    `${DATA.summary.error} error(s), ${DATA.summary.warning} warning(s), ${DATA.summary.info} info · configuration: ${DATA.configuration}`;

  // -- the overview: one row per system, one column per benchmark
  const folders = DATA.folders;
  const benchmarks = [...new Set(folders.map((f) => f.benchmark))].sort();
  const systems = new Map();
  for (const folder of folders) {
    const key = `${folder.submitter}\u0000${folder.system}\u0000${folder.path.split("/").slice(0, -1).join("/")}`;
    if (!systems.has(key)) {
      systems.set(key, {
        submitter: folder.submitter, system: folder.system, division: folder.division,
        availability: folder.availability, accelerator: folder.accelerator,
        // no prototype: a benchmark folder may be named `__proto__` or `constructor`
        accelerators: folder.accelerators, cells: Object.create(null),
      });
    }
    systems.get(key).cells[folder.benchmark] = folder;
  }
  const rows = [...systems.values()];
  const columns = [
    {key: "submitter", title: "submitter", value: (r) => r.submitter},
    {key: "system", title: "system", value: (r) => r.system},
    {key: "division", title: "division", value: (r) => r.division},
    {key: "availability", title: "availability", value: (r) => r.availability},
    {key: "accelerator", title: "accelerator", value: (r) => r.accelerator},
    {key: "accelerators", title: "accelerators", value: (r) => r.accelerators, numeric: true},
    ...benchmarks.map((b) => ({key: `b:${b}`, benchmark: b, title: b, value: (r) => (r.cells[b] ? r.cells[b].score : undefined), numeric: true})),
  ];
  const filterKeys = [
    ["division", (r) => r.division], ["availability", (r) => r.availability],
    ["benchmark", null], ["accelerator", (r) => r.accelerator], ["submitter", (r) => r.submitter],
  ];
  const filters = {};
  for (const [name, value] of filterKeys) {
    const options = name === "benchmark" ? benchmarks : [...new Set(rows.map(value).map(label))].sort();
    const select = el("select", {id: `filter-${name}`}, el("option", {value: ""}, "all"));
    for (const option of options) select.append(el("option", {value: option}, option));
    select.addEventListener("change", applyFilters);
    filters[name] = select;
    byId("filters").append(el("label", {}, name, select));
  }
  const matrix = byId("matrix");
  const headRow = el("tr", {});
  let sorted = {key: null, direction: "none"};
  for (const column of columns) {
    const button = el("button", {type: "button", "data-column": column.key}, column.title);
    button.addEventListener("click", () => sortBy(column));
    headRow.append(el("th", {scope: "col", "aria-sort": "none", "data-column": column.key}, button));
  }
  matrix.tHead.append(headRow);
  const body = matrix.tBodies[0];
  for (const row of rows) {
    const tr = el("tr", {});
    row.element = tr;
    for (const column of columns) {
      if (!column.benchmark) {
        tr.append(el("td", {class: column.numeric ? "num" : null, "data-column": column.key}, label(column.value(row))));
        continue;
      }
      const folder = row.cells[column.benchmark];
      const cell = el("td", {class: "num", "data-column": column.key});
      if (folder) {
        cell.append(el("a", {href: `#${folder.id}`, title: folder.path}, fixed(folder.score, 2)), counts(folder.findings));
        if (folder.valid === false) cell.append(" ", el("span", {class: "invalid", title: `invalid: ${folder.invalid_reason}`}, "invalid"));
      }
      tr.append(cell);
    }
    body.append(tr);
  }

  function compare(a, b, column) {
    const x = column.value(a), y = column.value(b);
    const missingX = x === null || x === undefined, missingY = y === null || y === undefined;
    if (missingX || missingY) return missingX - missingY; // missing values last either way
    const order = column.numeric ? x - y : String(x).localeCompare(String(y));
    return sorted.direction === "descending" ? -order : order;
  }
  function sortBy(column) {
    sorted = {key: column.key, direction: sorted.key === column.key && sorted.direction === "ascending" ? "descending" : "ascending"};
    for (const th of headRow.children) {
      th.setAttribute("aria-sort", th.dataset.column === column.key ? sorted.direction : "none");
    }
    rows.sort((a, b) => compare(a, b, column));
    for (const row of rows) body.append(row.element);
  }
  function applyFilters() {
    const wanted = Object.fromEntries(Object.entries(filters).map(([name, select]) => [name, select.value]));
    let shown = 0;
    for (const row of rows) {
      const show = filterKeys.every(([name, value]) =>
        !wanted[name] || (name === "benchmark" ? Boolean(row.cells[wanted.benchmark]) : label(value(row)) === wanted[name]));
      row.element.hidden = !show;
      shown += show;
    }
    for (const cell of matrix.querySelectorAll("[data-column^='b:']")) {
      cell.hidden = Boolean(wanted.benchmark) && cell.dataset.column !== `b:${wanted.benchmark}`;
    }
    byId("matrix-status").textContent = `${shown} of ${rows.length} systems shown`;
  }
  applyFilters();

  // -- charts
  const PALETTE = "observable10";
  function chart(options, description) {
    const figure = Plot.plot({
      width: 560, height: 300, marginLeft: 64, marginBottom: 44, style: {fontSize: "11px", overflow: "visible"},
      ariaDescription: description, ...options,
    });
    return el("div", {class: "chart"}, figure);
  }
  function convergence(folder) {
    if (!folder.curves.length) return null;
    const dropped = new Set(folder.runs.filter((r) => r.dropped).map((r) => r.name));
    const failed = new Set(folder.runs.filter((r) => !r.counted).map((r) => r.name));
    const name = (run) => run + (dropped.has(run) ? " (dropped: olympic)" : failed.has(run) ? " (not counted)" : "");
    const points = (keep) => folder.curves.filter((c) => keep(c.run))
      .flatMap((c) => c.points.map(([x, y]) => ({run: name(c.run), x, y})));
    const kept = (run) => !dropped.has(run) && !failed.has(run);
    const marks = [];
    if (folder.band) {
      marks.push(Plot.rectX([folder.band], {x1: (d) => d[0], x2: (d) => d[1], fill: "#2ca02c", fillOpacity: 0.13,
        title: (d) => `RCP band: minimum allowed mean ${d[0]} to RCP mean ${d[1]}`, className: "rcp-band"}));
    }
    if (folder.target) {
      marks.push(Plot.ruleY([folder.target.value], {stroke: "#d62728", strokeDasharray: "5 3", className: "quality-target",
        title: (v) => `quality target ${folder.target.direction} ${v}`}));
      marks.push(Plot.text([folder.target.value], {y: (v) => v, frameAnchor: "right", dy: -6, fill: "#d62728",
        text: (v) => `target ${folder.target.direction} ${v}`}));
    }
    marks.push(Plot.line(points(kept), {x: "x", y: "y", z: "run", stroke: "run", strokeWidth: 1.5, title: "run", className: "run-curve"}));
    marks.push(Plot.line(points((run) => !kept(run)), {x: "x", y: "y", z: "run", stroke: "run", strokeWidth: 1.5,
      strokeDasharray: "4 3", title: "run", className: "run-curve"}));
    return chart({
      ariaLabel: `convergence of ${folder.path}`,
      x: {label: `${folder.unit} →`, grid: true, tickFormat: "~s"},
      y: {label: `↑ ${folder.quality}`, grid: true},
      color: {legend: true, scheme: PALETTE, domain: folder.curves.map((c) => name(c.run))},
      marks,
    }, `${folder.curves.length} runs; dashed: runs dropped by olympic scoring or not counted; red: the quality target; green: the RCP band`);
  }
  function times(folder) {
    const runs = folder.runs.filter((r) => r.minutes !== null);
    if (!runs.length) return null;
    const state = (r) => (r.dropped ? "dropped (olympic)" : r.counted ? "counted" : "not counted");
    const marks = [
      Plot.barY(runs, {x: "name", y: "minutes", fill: state, title: (r) => `${r.name}: ${r.minutes.toFixed(3)} min, ${state(r)}`, className: "run-time"}),
    ];
    if (folder.olympic_mean) {
      marks.push(Plot.ruleY([folder.olympic_mean], {stroke: "#222", strokeDasharray: "5 3", title: (v) => `olympic mean ${v.toFixed(3)} min`}));
    }
    marks.push(Plot.ruleY([0]));
    return chart({
      ariaLabel: `time-to-train per run of ${folder.path}`, height: 240,
      x: {label: null, tickRotate: runs.length > 6 ? -35 : 0}, y: {label: "↑ time-to-train (min)", grid: true},
      marginBottom: runs.length > 6 ? 60 : 44,
      color: {legend: true, domain: ["counted", "dropped (olympic)", "not counted"], range: ["#4e79a7", "#bab0ac", "#e15759"]},
      marks,
    }, "each run's time-to-train; dashed: the olympic mean");
  }

  // -- per folder
  function folderView(folder) {
    const section = el("section", {class: "folder", id: folder.id, "aria-labelledby": `${folder.id}-title`});
    section.append(el("h3", {id: `${folder.id}-title`}, folder.path));
    const facts = [
      `${label(folder.submitter)} · ${label(folder.system)} · ${folder.benchmark}`,
      folder.accelerators ? `${folder.accelerators} × ${label(folder.accelerator)}` : null,
      `score ${fixed(folder.score, 3)} min` + (folder.valid === false ? ` (invalid: ${folder.invalid_reason})` : ""),
      folder.rcp_factor !== undefined ? `RCP factor ${fixed(folder.rcp_factor, 4)} ${label(folder.rcp_status)}` : null,
      folder.accelerator_minutes ? `${Math.round(folder.accelerator_minutes).toLocaleString("en")} accelerator-minutes` : null,
      folder.work_rate ? `${Number(folder.work_rate.toPrecision(6)).toLocaleString("en")} work per accelerator-minute` : null,
      folder.energy_joules ? `energy ${(folder.energy_joules / 1e6).toFixed(2)} MJ` : null,
      folder.envelope ? `envelope: ${folder.envelope.factor.toFixed(2)} of the bound (${folder.envelope.bound})` : null,
      folder.utilisation ? `peak: ${(100 * folder.utilisation.value).toFixed(1)}% of ${folder.utilisation.peak}` : null,
    ].filter(Boolean);
    section.append(el("p", {class: "muted"}, facts.join(" · ")));
    if (folder.spread) section.append(el("p", {class: "muted spread"}, folder.spread));
    if (folder.note) section.append(el("p", {class: "muted"}, folder.note));
    const columns = el("div", {class: "columns"});
    const charts = el("div", {});
    for (const figure of [convergence(folder), times(folder)]) if (figure) charts.append(figure);
    columns.append(charts, folderFindings(folder));
    section.append(columns);
    return section;
  }
  function folderFindings(folder) {
    const mine = DATA.findings.filter((f) => f.folder === folder.id);
    const box = el("div", {class: "findings-list"}, el("h4", {}, `Findings (${mine.length})`));
    if (!mine.length) return box;
    const list = el("ul", {});
    const boxes = {};
    const fieldset = el("fieldset", {}, el("legend", {}, "show"));
    for (const severity of SEVERITIES) {
      const n = mine.filter((f) => f.severity === severity).length;
      const input = el("input", {type: "checkbox", checked: true, "data-severity": severity});
      input.checked = true;
      input.addEventListener("change", () => {
        for (const item of list.children) item.hidden = !boxes[item.dataset.severity].checked;
      });
      boxes[severity] = input;
      fieldset.append(el("label", {}, input, ` ${severity} (${n}) `));
    }
    for (const f of mine) {
      list.append(el("li", {"data-severity": f.severity},
        el("span", {class: `sev-${f.severity}`}, f.severity + (f.waived ? " (waived)" : "")), " ",
        el("b", {}, f.rule), ` ${f.location}: ${f.message}`, f.hint ? el("div", {class: "muted"}, f.hint) : null));
    }
    box.append(fieldset, list);
    return box;
  }
  const folderViews = byId("folder-views");
  for (const folder of folders) folderViews.append(folderView(folder));

  // -- per benchmark: score against accelerators, the envelope's bound, energy
  // accelerator counts are mostly powers of two: the axis spans the powers around them and ticks at each
  function powersAround(counts) {
    const low = Math.min(...counts), high = Math.max(...counts);
    return [2 ** Math.floor(Math.log2(low) - 0.5), 2 ** Math.ceil(Math.log2(high) + 0.5)];
  }
  function powersOfTwo(counts) {
    const [low, high] = powersAround(counts);
    const ticks = [];
    for (let tick = low; tick <= high; tick *= 2) ticks.push(tick);
    return ticks;
  }
  function benchmarkView(benchmark) {
    const results = folders.filter((f) => f.benchmark === benchmark && f.score && f.accelerators);
    const section = el("section", {class: "benchmark", id: `benchmark-${benchmark}`}, el("h3", {}, benchmark));
    if (!results.length) return null;
    const beyond = (f) => (f.envelope && f.envelope.factor > 1) || (f.utilisation && f.utilisation.value > 1);
    const bounded = results.filter((f) => f.envelope);
    const who = (f) => `${label(f.submitter)} ${label(f.system)}: ${f.score.toFixed(2)} min on ${f.accelerators} × ${label(f.accelerator)}`;
    const marks = [
      Plot.link(bounded, {x1: "accelerators", x2: "accelerators", y1: "score", y2: (f) => f.score * f.envelope.factor, stroke: "#bbb"}),
      Plot.dot(bounded, {x: "accelerators", y: (f) => f.score * f.envelope.factor, symbol: "triangle", r: 3, stroke: "#777", fill: "white", className: "envelope-bound",
        title: (f) => `bound: ${f.envelope.bound}`}),
      Plot.dot(results, {x: "accelerators", y: "score", fill: (f) => label(f.accelerator), r: 4, title: who, className: "result"}),
      Plot.dot(results.filter(beyond), {x: "accelerators", y: "score", r: 8, stroke: "#d62728", strokeWidth: 2, className: "beyond",
        title: (f) => `${who(f)}: faster per accelerator than its hardware allows`}),
    ];
    section.append(chart({
      ariaLabel: `${benchmark}: score against accelerators`, width: 640,
      x: {type: "log", label: "accelerators →", grid: true, domain: powersAround(results.map((f) => f.accelerators)),
        ticks: powersOfTwo(results.map((f) => f.accelerators)), tickFormat: "d"},
      y: {type: "log", label: "↑ score (min)", grid: true, nice: true, tickFormat: "~g"},
      color: {legend: true, scheme: PALETTE}, marks,
    }, `${results.length} results; red rings: faster per accelerator than the hardware allows`));
    const flagged = results.filter(beyond);
    if (flagged.length) {
      const list = el("ul", {});
      for (const f of flagged) list.append(el("li", {class: "flag"}, el("a", {href: `#${f.id}`}, f.path), ` (${who(f)})`));
      section.append(el("p", {}, "Faster per accelerator than their hardware allows:"), list);
    }
    const powered = results.filter((f) => f.energy_joules);
    if (powered.length) {
      section.append(chart({
        ariaLabel: `${benchmark}: energy per result`, height: 40 + 22 * powered.length, marginLeft: 220,
        x: {label: "energy per result (MJ) →", grid: true}, y: {label: null},
        marks: [Plot.barX(powered, {y: (f) => `${label(f.submitter)} ${label(f.system)}`, x: (f) => f.energy_joules / 1e6,
          fill: "#59a14f", title: (f) => `${who(f)}: ${(f.energy_joules / 1e6).toFixed(2)} MJ`, className: "energy", sort: {y: "x"}})],
      }, "energy of each result with power measurements"));
    }
    return section;
  }
  const benchmarkViews = byId("benchmark-views");
  for (const benchmark of benchmarks) {
    const view = benchmarkView(benchmark);
    if (view) benchmarkViews.append(view);
  }

  // -- all findings
  const findingsBody = byId("findings-table").tBodies[0];
  const folderPath = new Map(folders.map((f) => [f.id, f.path]));
  for (const f of DATA.findings) {
    findingsBody.append(el("tr", {"data-severity": f.severity, class: f.severity},
      el("td", {class: `sev-${f.severity}`}, f.severity + (f.waived ? " (waived)" : "")), el("td", {}, f.rule),
      el("td", {}, f.location), el("td", {}, f.message), el("td", {}, label(f.hint)),
      el("td", {}, f.folder ? el("a", {href: `#${f.folder}`}, folderPath.get(f.folder)) : "-")));
  }
  function filterFindings() {
    const severity = byId("severity").value, text = byId("filter").value.toLowerCase();
    for (const row of findingsBody.rows) {
      row.hidden = !((severity === "all" || row.dataset.severity === severity) && row.textContent.toLowerCase().includes(text));
    }
  }
  byId("severity").addEventListener("change", filterFindings);
  byId("filter").addEventListener("input", filterFindings);

  // what the tests read: how many charts there are and how many drew a mark of non-zero size,
  // and how many run curves they drew
  const charts = document.querySelectorAll(".chart svg[aria-label]");
  let drawn = 0;
  for (const svg of charts) {
    const marks = svg.querySelectorAll("g[aria-label] path, g[aria-label] rect, g[aria-label] circle, g[aria-label] line");
    if ([...marks].some((m) => { const box = m.getBBox(); return box.width > 0 || box.height > 0; })) drawn++;
  }
  document.body.dataset.chartsTotal = charts.length;
  document.body.dataset.chartsDrawn = drawn;
  document.body.dataset.runCurves = document.querySelectorAll("g.run-curve path").length;
  document.body.dataset.ready = "yes";
})();
