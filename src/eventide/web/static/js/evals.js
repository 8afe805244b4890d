// The Evals tab: eval sets of the app, adding the open session as a case, running a set and
// reading its results. Talks to the /dev/apps/{app}/eval-sets... routes (google-adk's).

import { getJson, postJson } from "./api.js";
import { h } from "./render.js";

const enc = encodeURIComponent;
const STATUS = { 1: ["PASS", "b-pass"], 2: ["FAIL", "b-fail"], 3: ["N/A", "b-na"], 4: ["INFO", "b-na"] };
const METRICS = [
  ["tool_trajectory_avg_score", "Tool calls match", 1.0],
  ["response_match_score", "Response match (ROUGE-1)", 0.8],
];

// Kept across re-renders of the inspector.
const evals = { app: "", sets: [], set: "", cases: [], results: [], shown: null, thresholds: {} };

const base = (app) => `/dev/apps/${enc(app)}`;

async function refresh(ctx) {
  const app = ctx.app;
  const [sets, results] = await Promise.all([
    getJson(`${base(app)}/eval-sets`),
    getJson(`${base(app)}/eval-results`),
  ]);
  if (evals.app !== app) Object.assign(evals, { app, set: "", shown: null });
  evals.sets = sets.evalSetIds;
  evals.results = results.evalResultIds;
  if (!evals.sets.includes(evals.set)) evals.set = evals.sets[0] ?? "";
  evals.cases = evals.set ? await getJson(`${base(app)}/eval_sets/${enc(evals.set)}/evals`) : [];
}

function resultView(result) {
  const cases = result.evalCaseResults ?? result.runEvalResults ?? [];
  const rows = cases.map((c) => {
    const [label, cls] = STATUS[c.finalEvalStatus] ?? ["?", "b-na"];
    return h("tr", { class: "eval-row", dataset: { evalId: c.evalId } },
      h("td", {}, c.evalId),
      h("td", {}, h("span", { class: `badge ${cls}` }, label)),
      h("td", {}, (c.overallEvalMetricResults ?? []).map((m) =>
        h("div", { class: "small" }, `${m.metricName}: ${m.score == null ? "n/a" : m.score.toFixed(2)}`,
          h("span", { class: "muted" }, ` (≥ ${(m.threshold ?? m.criterion?.threshold ?? 0).toFixed(2)})`)))),
      h("td", { class: "small" }, c.errorMessage ?? ""));
  });
  const passed = cases.filter((c) => c.finalEvalStatus === 1).length;
  return h("div", { id: "eval-result", class: "eval-result" },
    h("div", { class: "insp-head" }, h("strong", {}, result.evalSetResultId ?? "Run"),
      h("span", { class: "muted small", id: "eval-summary" }, `${passed} of ${cases.length} passed`)),
    h("table", { class: "eval-table" },
      h("thead", {}, h("tr", {}, h("th", {}, "Case"), h("th", {}, "Result"), h("th", {}, "Scores"), h("th", {}, ""))),
      h("tbody", {}, rows)));
}

export function evalsTab(ctx) {
  const box = h("div", { class: "evals" }, h("p", { class: "muted" }, "Loading…"));
  // Leaving out the parts that do not apply (null), not printing them as "null".
  const rerender = () => box.replaceChildren(...render(ctx, rerender).filter(Boolean));
  ctx.guarded(async () => {
    await refresh(ctx);
    rerender();
  });
  return [box];
}

function render(ctx, rerender) {
  const act = (action, done) => ctx.guarded(async () => {
    await action();
    await refresh(ctx);
    rerender();
    if (done) ctx.setStatus(done, "ok");
  });
  const newId = h("input", { id: "eval-new-id", placeholder: "new_eval_set", size: 14, "aria-label": "New eval set id", spellcheck: "false" });
  const caseId = h("input", { id: "eval-case-id", value: `case_${Date.now().toString(36)}`, size: 14, "aria-label": "Eval case id", spellcheck: "false" });
  const setSelect = h("select", { id: "eval-set-select", "aria-label": "Eval set", onchange: (e) => {
    evals.set = e.target.value;
    act(async () => {});
  } }, evals.sets.map((id) => h("option", { value: id, selected: id === evals.set }, id)));
  const metricRows = METRICS.map(([name, label, threshold]) => {
    const chosen = evals.thresholds[name] ?? { on: true, threshold };
    evals.thresholds[name] = chosen;
    return h("label", { class: "eval-metric" },
      h("input", { type: "checkbox", checked: chosen.on, onchange: (e) => { chosen.on = e.target.checked; } }),
      ` ${label} ≥ `,
      h("input", { type: "number", min: 0, max: 1, step: 0.05, value: chosen.threshold, class: "eval-threshold",
        "aria-label": `${name} threshold`, onchange: (e) => { chosen.threshold = Number(e.target.value); } }));
  });
  const run = () => act(async () => {
    const evalMetrics = METRICS.filter(([name]) => evals.thresholds[name].on)
      .map(([name]) => ({ metricName: name, threshold: evals.thresholds[name].threshold }));
    ctx.setStatus("Running eval…", "busy");
    evals.shown = await postJson(`${base(ctx.app)}/eval-sets/${enc(evals.set)}/run`, { evalMetrics });
  }, "Eval run finished");
  return [
    h("div", { class: "insp-head" }, h("strong", {}, "Eval sets"), setSelect,
      h("span", { class: "muted small" }, evals.sets.length ? "" : "none yet")),
    h("div", { class: "eval-line" }, newId,
      h("button", { type: "button", id: "eval-create", class: "button secondary", onclick: () => {
        const id = newId.value.trim();
        if (!id) return;
        act(async () => {
          await postJson(`${base(ctx.app)}/eval-sets`, { evalSet: { eval_set_id: id, eval_cases: [] } });
          evals.set = id;
        }, `Eval set ${id} created`);
      } }, "Create set")),
    evals.set ? h("div", { class: "eval-line" }, caseId,
      h("button", { type: "button", id: "eval-add-session", class: "button secondary", disabled: !ctx.session, onclick: () =>
        act(() => postJson(`${base(ctx.app)}/eval-sets/${enc(evals.set)}/add-session`,
          { evalId: caseId.value.trim(), sessionId: ctx.session.id, userId: ctx.user }), "Session added as an eval case") },
      "Add this session as a case")) : null,
    evals.set ? h("div", { class: "small", id: "eval-cases" }, `Cases (${evals.cases.length}): `,
      evals.cases.map((c) => h("span", { class: "badge b-state" }, c))) : null,
    evals.set ? h("div", { class: "eval-metrics" }, metricRows) : null,
    evals.set ? h("button", { type: "button", id: "eval-run", class: "button primary", disabled: !evals.cases.length, onclick: run },
      `Run ${evals.set}`) : null,
    evals.shown ? resultView(evals.shown) : null,
    evals.results.length ? h("h4", {}, "Stored results") : null,
    h("ul", { class: "artifact-list", id: "eval-history" }, [...evals.results].reverse().map((id) =>
      h("li", {}, h("button", { type: "button", class: "link", onclick: () => act(async () => {
        evals.shown = await getJson(`${base(ctx.app)}/eval-results/${enc(id)}`);
      }) }, id)))),
  ];
}
