// Session history in the dev UI: rewind to before a turn, fork up to an event, and rewound
// events shown dimmed in the timeline (they stay in the log; the model no longer sees them).

import { postJson } from "./api.js";
import { h } from "./render.js";

const enc = encodeURIComponent;

function sessionPath(app, user, sid) {
  return `/apps/${enc(app)}/users/${enc(user)}/sessions/${enc(sid)}`;
}

// The ids of events a rewind hid: from the first event of the rewound invocation up to the
// rewind event itself (the same rule as eventide.history.model_view).
export function rewoundIds(events) {
  const firstOf = new Map();
  const hidden = new Set();
  events.forEach((event, index) => {
    if (event.invocationId && !firstOf.has(event.invocationId)) firstOf.set(event.invocationId, index);
    const target = event.actions?.rewindBeforeInvocationId;
    if (target && !hidden.has(event.id) && firstOf.has(target)) {
      for (let i = firstOf.get(target); i <= index; i += 1) hidden.add(events[i].id);
    }
  });
  return hidden;
}

// Dim the timeline items of rewound events and label them.
export function markRewound(list, events) {
  const hidden = rewoundIds(events);
  for (const item of list.querySelectorAll(".tl-item")) {
    if (!hidden.has(item.dataset.eventId)) continue;
    item.classList.add("rewound");
    item.style.opacity = "0.45";
    item.title = "Rewound: kept in the log, no longer sent to the model";
  }
}

// Buttons for the selected event: rewind to before its turn, fork the session up to it.
// `where` is {app, user, sessionId, events}; `done` gets {rewound} or {forkedId}.
export function historyActions(event, where, run, done) {
  if (!event || event.pending || !event.invocationId || event.author === "server") return null;
  const rewound = rewoundIds(where.events).has(event.id);
  const path = sessionPath(where.app, where.user, where.sessionId);
  const rewind = async () => {
    const result = await run(() =>
      postJson(`${path}/rewind`, { rewindBeforeInvocationId: event.invocationId }),
    );
    if (result) await done({ rewound: result });
  };
  const fork = async () => {
    const result = await run(() => postJson(`${path}/fork`, { upToEventId: event.id }));
    if (result) await done({ forkedId: result.id });
  };
  return h(
    "div",
    { class: "history-actions", style: "display:flex;gap:.5em;margin:.5em 0" },
    h("button", { type: "button", class: "button secondary", id: "rewind-button", disabled: rewound, onclick: rewind },
      "Rewind to before this turn"),
    h("button", { type: "button", class: "button secondary", id: "fork-button", onclick: fork },
      "Fork up to this event"),
  );
}
