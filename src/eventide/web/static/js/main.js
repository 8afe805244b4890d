// The dev UI: pick an app and a session, chat (streaming over /run_sse), inspect events.

import { ApiError, AuthRequired, api, getToken, runSse, setToken } from "./api.js";
import { evalsTab } from "./evals.js";
import { zoomable } from "./graph.js";
import { sessionActions } from "./sessions.js";
import { tracesTab } from "./traces.js";
import { callSignature, eventKind, eventText, statesAfterEvents } from "./events.js";
import { historyActions, markRewound } from "./history.js";
import { chatRows, h, jsonView, kindBadge, timelineItem } from "./render.js";

const $ = (id) => document.getElementById(id);

const ui = {
  app: "",
  user: localStorage.getItem("eventide.devui.user") || "user",
  session: null, // the session JSON from the server (state + committed events)
  events: [], // committed events shown (the session's, plus the ones streamed since)
  selectedId: null,
  tab: "event",
  artifacts: [],
  busy: false,
};

function setStatus(text, kind = "") {
  const el = $("status");
  el.textContent = text;
  el.className = `status ${kind}`;
}

async function guarded(action) {
  try {
    return await action();
  } catch (error) {
    if (error instanceof AuthRequired) {
      setStatus("Token needed", "error");
      openTokenDialog();
    } else {
      setStatus(error instanceof ApiError ? `${error.status}: ${error.message}` : String(error), "error");
      console.error(error);
    }
    return undefined;
  }
}

// --- apps and sessions ---

async function loadApps() {
  const apps = await guarded(() => api.listApps());
  if (!apps) return;
  const select = $("app-select");
  select.replaceChildren(...apps.map((name) => h("option", { value: name }, name)));
  const wanted = new URLSearchParams(location.search).get("app") || localStorage.getItem("eventide.devui.app");
  // Apps that fail to load stay listed (choosing one shows why), but are not picked for
  // the user: the first app a new user sees should be one that runs.
  const loading = new Set(((await guarded(() => api.listLoadingApps())) ?? { apps: [] }).apps.map((a) => a.name));
  for (const option of select.options) if (!loading.has(option.value)) option.textContent += " (does not load)";
  ui.app = apps.includes(wanted) ? wanted : apps.find((name) => loading.has(name)) ?? apps[0] ?? "";
  select.value = ui.app;
  if (!apps.length) setStatus("No apps found in this server's apps folder.", "error");
  await loadSessions();
}

async function loadSessions(selectId) {
  if (!ui.app) return;
  const sessions = await guarded(() => api.listSessions(ui.app, ui.user));
  if (!sessions) return;
  sessions.sort((a, b) => (b.lastUpdateTime ?? 0) - (a.lastUpdateTime ?? 0));
  const select = $("session-select");
  select.replaceChildren(
    ...sessions.map((s) =>
      h("option", { value: s.id }, `${s.id.slice(0, 18)} · ${new Date((s.lastUpdateTime ?? 0) * 1000).toLocaleString()}`),
    ),
  );
  const id = selectId ?? sessions[0]?.id;
  if (id) {
    select.value = id;
    await openSession(id);
  } else {
    await newSession();
  }
}

async function newSession() {
  const session = await guarded(() => api.createSession(ui.app, ui.user));
  if (!session) return;
  // Said before the session opens: opening it enables the chat, and a turn sent at once
  // (a quick user, a test) sets its own status, which this must not overwrite.
  setStatus("New session", "ok");
  await loadSessions(session.id);
}

async function openSession(id) {
  const session = await guarded(() => api.getSession(ui.app, ui.user, id));
  if (!session) return;
  ui.session = session;
  ui.events = session.events ?? [];
  ui.selectedId = ui.events.at(-1)?.id ?? null;
  renderAll();
  $("chat-input").disabled = false;
  $("send-button").disabled = false;
  await refreshArtifacts();
}

async function refreshSession() {
  if (!ui.session) return;
  const session = await guarded(() => api.getSession(ui.app, ui.user, ui.session.id));
  if (!session) return;
  ui.session = session;
  ui.events = session.events ?? [];
  renderAll();
}

async function refreshArtifacts() {
  if (!ui.session) return;
  ui.artifacts = (await guarded(() => api.listArtifacts(ui.app, ui.user, ui.session.id))) ?? [];
  $("artifact-count").textContent = ui.artifacts.length ? String(ui.artifacts.length) : "";
  if (ui.tab === "artifacts") renderInspector();
}

// --- chatting ---

async function send(text) {
  if (!text.trim() || ui.busy || !ui.session) return;
  ui.busy = true;
  $("send-button").disabled = true;
  const userEvent = {
    id: `pending-${Date.now()}`,
    author: "user",
    content: { role: "user", parts: [{ text }] },
    actions: {},
    pending: true,
  };
  ui.events = [...ui.events, userEvent];
  renderAll();
  let streamingBubble = null;
  let streamed = "";
  const log = $("chat-log");
  setStatus("Running…", "busy");
  const body = {
    app_name: ui.app,
    user_id: ui.user,
    session_id: ui.session.id,
    new_message: { role: "user", parts: [{ text }] },
    streaming: $("streaming-toggle").checked,
  };
  let failed = false;
  let refused = null; // the server answered an error status instead of a stream
  try {
    await runSse(body, (event) => {
      if (event.partial) {
        streamed += eventText(event);
        if (!streamingBubble) {
          streamingBubble = h("div", { class: "msg msg-agent streaming" },
            h("div", { class: "msg-author" }, event.author), h("div", { class: "msg-text" }));
          log.append(streamingBubble);
        }
        streamingBubble.querySelector(".msg-text").textContent = streamed;
        log.scrollTop = log.scrollHeight;
        return;
      }
      if (!event.author) {
        // An error frame: {"error_code", "error_message"}.
        failed = true;
        event = { ...event, id: `error-${Date.now()}`, author: "server", actions: {} };
      }
      streamingBubble?.remove();
      streamingBubble = null;
      streamed = "";
      ui.events = [...ui.events, event];
      ui.selectedId = event.id;
      renderAll();
    });
  } catch (error) {
    if (error instanceof AuthRequired) openTokenDialog();
    refused = error;
  }
  ui.busy = false;
  $("send-button").disabled = false;
  streamingBubble?.remove();
  if (refused) {
    // Nothing of the turn was stored: keep the message (in the chat and, to send again, in
    // the input) and show the server's answer where the reply would have been.
    userEvent.failed = true;
    const status = refused instanceof ApiError ? `${refused.status}: ` : "";
    const shown = { id: `error-${Date.now()}`, author: "server", actions: {},
      errorCode: refused instanceof ApiError ? `HTTP ${refused.status}` : "NETWORK",
      errorMessage: errorText(refused) };
    ui.events = [...ui.events, shown];
    ui.selectedId = shown.id;
    renderAll();
    if (!$("chat-input").value) $("chat-input").value = text;
    setStatus(`The turn failed (${status}${errorText(refused).slice(0, 80)})`, "error");
    return;
  }
  const errorEvents = failed ? ui.events.filter((e) => e.author === "server") : [];
  await refreshSession();
  if (errorEvents.length) {
    // The error frame is not an event of the log; keep showing it after the refresh.
    ui.events = [...ui.events, ...errorEvents];
    ui.selectedId = errorEvents.at(-1).id;
    renderAll();
  }
  await refreshArtifacts();
  setStatus(failed ? "The turn failed" : "Done", failed ? "error" : "ok");
}

function errorText(error) {
  if (error instanceof ApiError && error.detail && typeof error.detail === "object") {
    const detail = error.detail;
    if (detail.errorMessage) return `${detail.errorCode ?? "Error"}: ${detail.errorMessage}`;
    if (Array.isArray(detail)) return detail.map((d) => d.msg ?? JSON.stringify(d)).join("; ");
  }
  return error?.message ?? String(error);
}

// --- rendering ---

function renderAll() {
  renderChat();
  renderTimeline();
  renderInspector();
}

function select(id) {
  ui.selectedId = id;
  renderTimeline();
  renderInspector();
  for (const el of document.querySelectorAll("#chat-log [data-event-id]"))
    el.classList.toggle("selected", el.dataset.eventId === id);
}

function renderChat() {
  const log = $("chat-log");
  const rows = ui.events.flatMap((e) => chatRows(e, select));
  log.replaceChildren(...(rows.length ? rows : [h("p", { class: "empty" }, "No messages yet: say hello.")]));
  for (const el of log.querySelectorAll("[data-event-id]")) el.classList.toggle("selected", el.dataset.eventId === ui.selectedId);
  log.scrollTop = log.scrollHeight;
}

function renderTimeline() {
  const list = $("timeline");
  // A thin header starts each invocation (one user turn and everything it caused).
  const rows = [];
  let invocation = null;
  let turn = 0;
  ui.events.forEach((e, i) => {
    if (e.invocationId && e.invocationId !== invocation) {
      invocation = e.invocationId;
      turn += 1;
      rows.push(h("li", { class: "tl-sep", "aria-hidden": "true" }, `turn ${turn}`, h("code", {}, invocation)));
    }
    rows.push(timelineItem(e, i, e.id === ui.selectedId, select));
  });
  list.replaceChildren(...rows);
  markRewound(list, ui.events);
  $("event-count").textContent = ui.events.length ? String(ui.events.length) : "";
  list.querySelector(".selected")?.scrollIntoView({ block: "nearest" });
}

function selectedEvent() {
  return ui.events.find((e) => e.id === ui.selectedId) ?? null;
}

function renderInspector() {
  for (const tab of document.querySelectorAll(".tab")) tab.classList.toggle("active", tab.dataset.tab === ui.tab);
  const box = $("inspector");
  const event = selectedEvent();
  const view = { event: eventTab, state: stateTab, request: requestTab, artifacts: artifactsTab, evals: evalsView, graph: graphTab, traces: tracesView }[ui.tab];
  box.replaceChildren(...view(event).filter(Boolean));
}

function eventTab(event) {
  if (!event) return [h("p", { class: "empty" }, "Select an event in the timeline.")];
  const { pending, ...shown } = event;
  return [
    h("div", { class: "insp-head" }, h("strong", {}, event.author), kindBadge(eventKind(event)),
      h("code", { class: "muted" }, event.id)),
    event.invocationId ? h("div", { class: "muted small" }, `invocation ${event.invocationId}`) : null,
    historyActions(event, { app: ui.app, user: ui.user, sessionId: ui.session?.id, events: ui.events }, guarded,
      async ({ rewound, forkedId }) => {
        if (forkedId) await loadSessions(forkedId);
        else await refreshSession();
        await refreshArtifacts();
        setStatus(forkedId ? "Forked into a new session" : "Rewound", "ok");
      }),
    jsonView(shown),
  ];
}

function stateTab(event) {
  if (!ui.session) return [h("p", { class: "empty" }, "No session.")];
  const { initial, timeline } = statesAfterEvents(ui.events, ui.session.state);
  const index = event ? ui.events.indexOf(event) : ui.events.length - 1;
  const entry = index >= 0 ? timeline[index] : { state: initial, changed: [] };
  const changed = new Set(entry.changed);
  return [
    h("div", { class: "insp-head" }, h("strong", {}, index >= 0 ? `State after event #${index + 1}` : "Initial state")),
    changed.size
      ? h("div", { class: "small" }, "Changed by this event: ", [...changed].map((k) => h("span", { class: "badge b-state" }, k)))
      : h("div", { class: "muted small" }, "This event changed no state."),
    jsonView(entry.state, changed),
    h("div", { class: "muted small" }, "temp: keys live only during an invocation and are never stored."),
  ];
}

function requestTab(event) {
  if (!event) return [h("p", { class: "empty" }, "Select a model event to see what the model was asked.")];
  const box = h("div", { class: "request" }, h("p", { class: "muted" }, "Loading…"));
  api.modelRequest(event.id).then(
    (request) => {
      if (ui.selectedId !== event.id || ui.tab !== "request") return;
      const config = request.config ?? {};
      const tools = (config.tools ?? []).flatMap((t) => t.functionDeclarations ?? []).map((d) => d.name);
      box.replaceChildren(
        h("div", { class: "insp-head" }, h("strong", {}, "Model request"), h("code", {}, request.model ?? "")),
        config.systemInstruction ? h("h4", {}, "System instruction") : null,
        config.systemInstruction ? h("pre", { class: "instruction" }, config.systemInstruction) : null,
        tools.length ? h("h4", {}, "Tools") : null,
        tools.length ? h("div", {}, tools.map((t) => h("span", { class: "badge b-tool" }, t))) : null,
        h("h4", {}, `Contents (${(request.contents ?? []).length})`),
        h("ol", { class: "contents" }, (request.contents ?? []).map((c) => h("li", {},
          h("span", { class: `role role-${c.role}` }, c.role ?? "?"),
          (c.parts ?? []).map((p) => h("div", { class: "part" }, partText(p)))))),
        h("details", {}, h("summary", {}, "Raw JSON"), jsonView(request)),
      );
    },
    (error) => {
      if (error instanceof AuthRequired) openTokenDialog();
      box.replaceChildren(h("p", { class: "muted" },
        error instanceof ApiError && error.status === 404
          ? "No model request for this event: only events produced by a model call have one (and the server keeps the recent ones)."
          : String(error)));
    },
  );
  return [box];
}

function partText(part) {
  if (typeof part.text === "string") return part.thought ? `(thought) ${part.text}` : part.text;
  if (part.functionCall) return `→ ${callSignature(part.functionCall)}`;
  if (part.functionResponse)
    return `← ${part.functionResponse.name}: ${JSON.stringify(part.functionResponse.response ?? {})}`;
  if (part.inlineData) return `[${part.inlineData.mimeType ?? "bytes"} attachment]`;
  if (part.fileData) return `[file ${part.fileData.fileUri ?? ""}]`;
  return JSON.stringify(part);
}

function artifactsTab() {
  if (!ui.artifacts.length) return [h("p", { class: "empty" }, "No artifacts in this session.")];
  const viewer = h("div", { class: "artifact-view" });
  const show = async (name) => {
    viewer.replaceChildren(h("p", { class: "muted" }, "Loading…"));
    const part = await guarded(() => api.getArtifact(ui.app, ui.user, ui.session.id, name));
    if (!part) return;
    const blob = part.inlineData;
    if (part.text !== undefined) viewer.replaceChildren(h("h4", {}, name), h("pre", { class: "instruction" }, part.text));
    else if (blob?.mimeType?.startsWith("image/"))
      viewer.replaceChildren(h("h4", {}, name), h("img", { src: `data:${blob.mimeType};base64,${blob.data}`, alt: name }));
    else viewer.replaceChildren(h("h4", {}, name), jsonView(part));
  };
  return [
    h("ul", { class: "artifact-list" }, ui.artifacts.map((name) =>
      h("li", {}, h("button", { type: "button", class: "link", onclick: () => show(name) }, name)))),
    viewer,
  ];
}

// The app's agents, tools, transfers and workflow edges, drawn by the server (Graphviz).
// Drawn once per app: the inspector re-renders on every session change and turn, and a fresh
// drawing would throw away the user's zoom and pan.
let drawnGraph = { app: null, box: null };

function graphTab() {
  if (drawnGraph.app === ui.app && drawnGraph.box) return [drawnGraph.box];
  const box = h("div", { class: "agent-graph" }, h("p", { class: "muted" }, "Drawing the agent graph…"));
  const app = ui.app;
  drawnGraph = { app, box };
  (async () => {
    try {
      const svg = new DOMParser().parseFromString(await api.graphSvg(app), "image/svg+xml").documentElement;
      if (ui.app === app) box.replaceChildren(h("h4", {}, `Agents of ${app}`), zoomable(document.importNode(svg, true)));
    } catch (error) {
      // No Graphviz on the server: show the DOT source and say why.
      const dot = await guarded(() => api.graphDot(app));
      if (ui.app === app)
        box.replaceChildren(h("p", { class: "muted small" }, String(error.message ?? error)),
          dot ? h("pre", { class: "instruction" }, dot) : null);
    }
  })();
  return [box];
}

function tracesView() {
  return tracesTab({ app: ui.app, session: ui.session, events: ui.events, guarded, select: (id) => {
    ui.tab = "event";
    select(id);
  } });
}

function evalsView() {
  return evalsTab({ app: ui.app, user: ui.user, session: ui.session, guarded, setStatus });
}

// --- token dialog ---

function openTokenDialog() {
  const dialog = $("token-dialog");
  $("token-input").value = getToken();
  if (!dialog.open) dialog.showModal();
}

// --- wiring ---

function wire() {
  $("user-input").value = ui.user;
  $("app-select").addEventListener("change", async (e) => {
    ui.app = e.target.value;
    localStorage.setItem("eventide.devui.app", ui.app);
    await loadSessions();
  });
  $("user-input").addEventListener("change", async (e) => {
    ui.user = e.target.value.trim() || "user";
    localStorage.setItem("eventide.devui.user", ui.user);
    await loadSessions();
  });
  $("session-select").addEventListener("change", (e) => openSession(e.target.value));
  $("new-session").addEventListener("click", () => newSession());
  sessionActions({
    current: () => ({ app: ui.app, user: ui.user, session: ui.session }),
    guarded,
    setStatus,
    reload: (id) => loadSessions(id),
  });
  $("chat-form").addEventListener("submit", (e) => {
    e.preventDefault();
    const input = $("chat-input");
    const text = input.value;
    input.value = "";
    send(text);
  });
  $("chat-input").addEventListener("keydown", (e) => {
    if (e.key === "Enter" && !e.shiftKey) {
      e.preventDefault();
      $("chat-form").requestSubmit();
    }
  });
  for (const tab of document.querySelectorAll(".tab"))
    tab.addEventListener("click", () => {
      ui.tab = tab.dataset.tab;
      renderInspector();
    });
  $("token-button").addEventListener("click", openTokenDialog);
  $("token-dialog").addEventListener("close", () => {
    if ($("token-dialog").returnValue === "save") {
      setToken($("token-input").value.trim());
      loadApps();
    }
  });
}

wire();
loadApps();
