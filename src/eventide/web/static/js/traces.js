// The Traces tab: the spans of the open session's turns, as the server keeps them
// (/dev/apps/{app}/debug/trace/session/{id}), one tree per turn with each span's duration.

import { getJson } from "./api.js";
import { h } from "./render.js";

const enc = encodeURIComponent;

export function tracesTab(ctx) {
  if (!ctx.session) return [h("p", { class: "empty" }, "No session.")];
  const box = h("div", { class: "traces", id: "traces" }, h("p", { class: "muted" }, "Loading spans…"));
  ctx.guarded(async () => {
    const spans = await getJson(`/dev/apps/${enc(ctx.app)}/debug/trace/session/${enc(ctx.session.id)}`);
    box.replaceChildren(...render(spans, ctx));
  });
  return [box];
}

function render(spans, ctx) {
  if (!spans.length)
    return [h("p", { class: "empty" }, "No spans for this session yet: they are recorded for turns run by this server process.")];
  const turns = new Map(); // invocation id -> its spans, in the order they started
  for (const span of [...spans].sort((a, b) => a.start_time - b.start_time)) {
    const invocation = span.attributes?.["eventide.invocation_id"] ?? span.trace_id;
    if (!turns.has(invocation)) turns.set(invocation, []);
    turns.get(invocation).push(span);
  }
  let number = 0;
  return [...turns].map(([invocation, turnSpans]) => {
    number += 1;
    const root = turnSpans[0];
    const total = ms(Math.max(...turnSpans.map((s) => s.end_time)) - root.start_time);
    return h("details", { class: "trace-turn", open: true },
      h("summary", {}, h("strong", {}, `Turn ${number}`), ` · ${turnSpans.length} spans · ${total}`,
        h("code", { class: "muted small" }, ` ${invocation}`)),
      h("ol", { class: "span-tree" }, tree(turnSpans, ctx)));
  });
}

function tree(spans, ctx) {
  const ids = new Set(spans.map((s) => s.span_id));
  const children = new Map();
  for (const span of spans) {
    const parent = ids.has(span.parent_span_id) ? span.parent_span_id : null;
    if (!children.has(parent)) children.set(parent, []);
    children.get(parent).push(span);
  }
  const start = Math.min(...spans.map((s) => s.start_time));
  const end = Math.max(...spans.map((s) => s.end_time));
  const row = (span, depth) => {
    const eventId = span.attributes?.["gcp.vertex.agent.event_id"];
    const offset = ((span.start_time - start) / Math.max(1, end - start)) * 100;
    const width = Math.max(0.5, ((span.end_time - span.start_time) / Math.max(1, end - start)) * 100);
    return [
      h("li", { class: "span-row", style: `--depth: ${depth}`, dataset: { spanName: span.name } },
        h("span", { class: "span-name" }, span.name),
        h("span", { class: "span-bar-track" },
          h("span", { class: "span-bar", style: `left: ${offset}%; width: ${width}%` })),
        h("span", { class: "span-ms" }, ms(span.end_time - span.start_time)),
        eventId ? h("button", { type: "button", class: "link small", onclick: () => ctx.select(eventId) }, "event") : null),
      ...(children.get(span.span_id) ?? []).flatMap((child) => row(child, depth + 1)),
    ];
  };
  return (children.get(null) ?? []).flatMap((span) => row(span, 0));
}

function ms(nanoseconds) {
  const value = nanoseconds / 1e6;
  return value < 10 ? `${value.toFixed(2)} ms` : `${Math.round(value)} ms`;
}
