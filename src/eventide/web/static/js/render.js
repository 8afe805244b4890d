// DOM building. Everything goes through textContent: model output is never parsed as HTML.

import { actionBadges, callSignature, eventKind, eventSummary, eventText, parts } from "./events.js";

export function h(tag, attrs = {}, ...children) {
  const el = document.createElement(tag);
  for (const [key, value] of Object.entries(attrs)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "class") el.className = value;
    else if (key === "dataset") Object.assign(el.dataset, value);
    else if (key.startsWith("on")) el.addEventListener(key.slice(2), value);
    else el.setAttribute(key, value === true ? "" : value);
  }
  for (const child of children.flat()) {
    if (child === undefined || child === null || child === false) continue;
    el.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return el;
}

// Pretty JSON with light syntax colouring; top-level keys in `highlight` are marked.
export function jsonView(value, highlight = new Set()) {
  const pre = h("pre", { class: "json" });
  writeJson(pre, value, 0, highlight);
  return pre;
}

function writeJson(target, value, indent, highlight) {
  if (value === null || typeof value !== "object") {
    const type = value === null ? "null" : typeof value;
    target.append(h("span", { class: `j-${type}` }, JSON.stringify(value)));
    return;
  }
  const isArray = Array.isArray(value);
  const entries = isArray ? value.map((item, i) => [i, item]) : Object.entries(value);
  if (!entries.length) {
    target.append(isArray ? "[]" : "{}");
    return;
  }
  const pad = "  ".repeat(indent);
  target.append(isArray ? "[\n" : "{\n");
  entries.forEach(([key, item], i) => {
    // Each entry is one element, so a highlighted key's whole value is marked with it.
    const marked = indent === 0 && !isArray && highlight.has(key);
    const line = h("span", { class: marked ? "j-line changed" : "j-line" }, `${pad}  `);
    if (!isArray) line.append(h("span", { class: "j-key" }, JSON.stringify(key)), ": ");
    writeJson(line, item, indent + 1, highlight);
    line.append(i < entries.length - 1 ? ",\n" : "\n");
    target.append(line);
  });
  target.append(pad + (isArray ? "]" : "}"));
}

const KIND_CLASS = {
  text: "k-text",
  "function call": "k-call",
  "function response": "k-response",
  state: "k-state",
  output: "k-response",
  transfer: "k-transfer",
  error: "k-error",
  other: "k-other",
};

export function kindBadge(kind) {
  return h("span", { class: `kind ${KIND_CLASS[kind] ?? "k-other"}` }, kind);
}

export function timelineItem(event, index, selected, onSelect) {
  const kind = eventKind(event);
  const time = event.timestamp ? new Date(event.timestamp * 1000).toLocaleTimeString() : "";
  return h(
    "li",
    {
      class: `tl-item${selected ? " selected" : ""}`,
      dataset: { eventId: event.id, kind },
      tabindex: "0",
      onclick: () => onSelect(event.id),
      onkeydown: (e) => (e.key === "Enter" || e.key === " ") && onSelect(event.id),
    },
    h(
      "div",
      { class: "tl-head" },
      h("span", { class: "tl-index" }, `#${index + 1}`),
      h("span", { class: `tl-author${event.author === "user" ? " is-user" : ""}` }, event.author),
      kindBadge(kind),
      h("span", { class: "tl-time" }, time),
    ),
    h("div", { class: "tl-summary" }, eventSummary(event)),
    actionBadges(event).length
      ? h("div", { class: "tl-actions" }, actionBadges(event).map((b) => h("span", { class: `badge b-${b.kind}` }, b.label)))
      : null,
  );
}

// Chat rows for one committed event.
export function chatRows(event, onSelect) {
  const rows = [];
  const kind = eventKind(event);
  const select = () => onSelect(event.id);
  if (kind === "error") {
    rows.push(
      h("div", { class: "msg msg-error", dataset: { eventId: event.id }, onclick: select },
        h("div", { class: "msg-author" }, event.author ?? "error"),
        `${event.errorCode ?? "error"}: ${event.errorMessage ?? ""}`),
    );
    return rows;
  }
  for (const part of parts(event)) {
    if (part.functionCall) {
      rows.push(h("div", { class: "tool-line call", dataset: { eventId: event.id }, onclick: select },
        h("span", { class: "tool-arrow" }, "→"), callSignature(part.functionCall)));
    } else if (part.functionResponse) {
      const r = part.functionResponse;
      rows.push(h("div", { class: "tool-line response", dataset: { eventId: event.id }, onclick: select },
        h("span", { class: "tool-arrow" }, "←"), `${r.name}: ${JSON.stringify(r.response ?? {})}`));
    }
  }
  const text = eventText(event);
  if (text) {
    const mine = event.author === "user";
    rows.push(
      h("div", { class: `msg ${mine ? "msg-user" : "msg-agent"}${event.failed ? " failed" : ""}`,
        dataset: { eventId: event.id }, onclick: select, title: event.failed ? "Not stored: the turn failed" : undefined },
        mine ? null : h("div", { class: "msg-author" }, event.author),
        h("div", { class: "msg-text" }, text)),
    );
  }
  if (!text && event.output !== undefined && event.output !== null) {
    // A workflow node's result: shown as its answer, text as it is, data as JSON.
    const shown = typeof event.output === "string" ? event.output : JSON.stringify(event.output);
    rows.push(
      h("div", { class: "msg msg-agent msg-output", dataset: { eventId: event.id }, onclick: select },
        h("div", { class: "msg-author" }, event.nodeInfo?.path || event.author),
        h("div", { class: "msg-text" }, shown)),
    );
  }
  const transfer = event.actions?.transferToAgent;
  if (transfer) rows.push(h("div", { class: "note" }, `${event.author} transferred to ${transfer}`));
  return rows;
}
