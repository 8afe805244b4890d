// What an event is, in the terms of the spec: kind, summary, actions, and state over time.

export function parts(event) {
  return event?.content?.parts ?? [];
}

export function eventText(event) {
  return parts(event)
    .filter((p) => typeof p.text === "string" && !p.thought)
    .map((p) => p.text)
    .join("");
}

const isEmpty = (obj) => !obj || Object.keys(obj).length === 0;

// One of: error, transfer, function call, function response, text, output (a workflow
// node's result), state, other.
export function eventKind(event) {
  if (event.errorCode || event.errorMessage) return "error";
  const ps = parts(event);
  if (event.actions?.transferToAgent) return "transfer";
  if (ps.some((p) => p.functionCall)) return "function call";
  if (ps.some((p) => p.functionResponse)) return "function response";
  if (ps.some((p) => typeof p.text === "string" && !p.thought)) return "text";
  if (event.output !== undefined && event.output !== null) return "output";
  const actions = event.actions ?? {};
  if (!isEmpty(actions.stateDelta) || !isEmpty(actions.artifactDelta)) return "state";
  return "other";
}

function short(value, max = 80) {
  const text = typeof value === "string" ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

export function callSignature(call) {
  const args = Object.entries(call.args ?? {})
    .map(([k, v]) => `${k}=${short(JSON.stringify(v), 30)}`)
    .join(", ");
  return `${call.name}(${args})`;
}

export function eventSummary(event) {
  const kind = eventKind(event);
  const ps = parts(event);
  switch (kind) {
    case "error":
      return `${event.errorCode ?? "error"}: ${event.errorMessage ?? ""}`;
    case "transfer":
      return `→ ${event.actions.transferToAgent}`;
    case "function call":
      return ps.filter((p) => p.functionCall).map((p) => callSignature(p.functionCall)).join(", ");
    case "function response":
      return ps
        .filter((p) => p.functionResponse)
        .map((p) => `${p.functionResponse.name} → ${short(p.functionResponse.response ?? {}, 60)}`)
        .join(", ");
    case "text":
      return short(eventText(event), 120);
    case "output":
      return short(event.output, 120);
    case "state":
      return "state / artifact update";
    default:
      return "";
  }
}

// Short labels for the actions an event carries.
export function actionBadges(event) {
  const a = event.actions ?? {};
  const badges = [];
  // A workflow node's events: which node, and the route it chose.
  if (event.nodeInfo?.path) badges.push({ kind: "node", label: `node ${event.nodeInfo.path}` });
  if (a.route !== undefined && a.route !== null) badges.push({ kind: "route", label: `route → ${short(a.route, 40)}` });
  for (const key of Object.keys(a.stateDelta ?? {})) badges.push({ kind: "state", label: `state: ${key}` });
  for (const [name, version] of Object.entries(a.artifactDelta ?? {}))
    badges.push({ kind: "artifact", label: `artifact: ${name} v${version}` });
  if (a.transferToAgent) badges.push({ kind: "transfer", label: `transfer → ${a.transferToAgent}` });
  if (a.escalate) badges.push({ kind: "escalate", label: "escalate" });
  if (a.skipSummarization) badges.push({ kind: "flag", label: "skip summarization" });
  if (a.endOfAgent) badges.push({ kind: "flag", label: "end of agent" });
  if (!isEmpty(a.requestedToolConfirmations)) badges.push({ kind: "flag", label: "confirmation requested" });
  if (!isEmpty(a.requestedAuthConfigs)) badges.push({ kind: "flag", label: "auth requested" });
  if (event.longRunningToolIds?.length) badges.push({ kind: "flag", label: "long-running tool" });
  return badges;
}

// The state after each event: the fold of the state deltas in log order, starting from the
// keys that no event set (they came from the session's initial state, or from app:/user:
// writes made by other sessions). Returns [{state, changed}] aligned with events.
export function statesAfterEvents(events, finalState) {
  const touched = new Set();
  for (const e of events) for (const key of Object.keys(e.actions?.stateDelta ?? {})) touched.add(key);
  let state = {};
  for (const [key, value] of Object.entries(finalState ?? {})) if (!touched.has(key)) state[key] = value;
  const initial = { ...state };
  const timeline = events.map((e) => {
    const delta = e.actions?.stateDelta ?? {};
    const changed = Object.keys(delta).filter((k) => !k.startsWith("temp:"));
    if (changed.length) {
      state = { ...state };
      for (const key of changed) state[key] = delta[key];
    }
    return { state, changed };
  });
  return { initial, timeline };
}
