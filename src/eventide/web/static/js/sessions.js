// Session actions beside the session picker: delete, rename, export to a file, import one.
//
// The API has no rename: a session is renamed by creating it again under the new id with
// its events (POST .../sessions with sessionId and events, which imports them in order)
// and deleting the old one. An export is the session's JSON as GET returns it; importing it
// creates a new session holding its events.

import { api } from "./api.js";
import { h } from "./render.js";

const $ = (id) => document.getElementById(id);

// What to send to recreate `session`: its events, and the state its events do not set
// (the state it was created with). app: and user: keys are shared, not the session's own.
export function recreateBody(session, sessionId) {
  const setByEvents = new Set((session.events ?? []).flatMap((e) => Object.keys(e.actions?.stateDelta ?? {})));
  const state = Object.fromEntries(Object.entries(session.state ?? {}).filter(([key]) =>
    !setByEvents.has(key) && !key.startsWith("app:") && !key.startsWith("user:") && !key.startsWith("temp:")));
  const body = { state, events: session.events ?? [] };
  if (sessionId) body.sessionId = sessionId;
  return body;
}

export function sessionActions({ current, guarded, setStatus, reload }) {
  const picker = $("session-file");
  $("session-delete").addEventListener("click", async () => {
    const { app, user, session } = current();
    if (!session || !confirm(`Delete session ${session.id} and its events?`)) return;
    if ((await guarded(() => api.deleteSession(app, user, session.id))) === undefined) return;
    await reload();
    setStatus(`Deleted session ${session.id}`, "ok");
  });
  $("session-rename").addEventListener("click", async () => {
    const { app, user, session } = current();
    if (!session) return;
    const id = prompt("New session id", session.id)?.trim();
    if (!id || id === session.id) return;
    const full = await guarded(() => api.getSession(app, user, session.id));
    if (!full) return;
    const created = await guarded(() => api.createSession(app, user, recreateBody(full, id)));
    if (!created) return;
    await guarded(() => api.deleteSession(app, user, session.id));
    await reload(created.id);
    setStatus(`Renamed to ${created.id}`, "ok");
  });
  $("session-export").addEventListener("click", async () => {
    const { app, user, session } = current();
    if (!session) return;
    const full = await guarded(() => api.getSession(app, user, session.id));
    if (!full) return;
    const blob = new Blob([JSON.stringify(full, null, 2)], { type: "application/json" });
    const link = h("a", { href: URL.createObjectURL(blob), download: `${app}-${full.id}.session.json` });
    document.body.append(link);
    link.click();
    link.remove();
    URL.revokeObjectURL(link.href);
    setStatus(`Exported ${full.id}`, "ok");
  });
  $("session-import").addEventListener("click", () => picker.click());
  picker.addEventListener("change", async () => {
    const file = picker.files?.[0];
    picker.value = "";
    if (!file) return;
    const { app, user } = current();
    let exported;
    try {
      exported = JSON.parse(await file.text());
    } catch (error) {
      setStatus(`${file.name} is not a session export (not JSON: ${error.message})`, "error");
      return;
    }
    if (!exported || !Array.isArray(exported.events)) {
      setStatus(`${file.name} is not a session export (no events list)`, "error");
      return;
    }
    const created = await guarded(() => api.createSession(app, user, recreateBody(exported)));
    if (!created) return;
    await reload(created.id);
    setStatus(`Imported ${exported.events.length} events into ${created.id}`, "ok");
  });
}
