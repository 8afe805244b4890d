// Talking to the Eventide HTTP API: JSON calls and the /run_sse stream.

const TOKEN_KEY = "eventide.devui.token";

export class AuthRequired extends Error {}

export class ApiError extends Error {
  constructor(status, detail) {
    super(typeof detail === "string" ? detail : JSON.stringify(detail));
    this.status = status;
    this.detail = detail;
  }
}

export function getToken() {
  return localStorage.getItem(TOKEN_KEY) || "";
}

export function setToken(token) {
  if (token) localStorage.setItem(TOKEN_KEY, token);
  else localStorage.removeItem(TOKEN_KEY);
}

function headers(extra = {}) {
  const token = getToken();
  return token ? { ...extra, Authorization: `Bearer ${token}` } : extra;
}

async function check(response) {
  if (response.status === 401) throw new AuthRequired("This server needs a bearer token.");
  if (!response.ok) {
    let detail = response.statusText;
    try {
      detail = (await response.json()).detail ?? detail;
    } catch {
      // not JSON: keep the status text
    }
    throw new ApiError(response.status, detail);
  }
  return response;
}

export async function getJson(path) {
  const response = await check(await fetch(path, { headers: headers() }));
  return response.json();
}

export async function getText(path) {
  const response = await check(await fetch(path, { headers: headers() }));
  return response.text();
}

export async function postJson(path, body) {
  const response = await check(
    await fetch(path, {
      method: "POST",
      headers: headers({ "Content-Type": "application/json" }),
      body: body === undefined ? undefined : JSON.stringify(body),
    }),
  );
  return response.json();
}

export async function deleteJson(path) {
  const response = await check(await fetch(path, { method: "DELETE", headers: headers() }));
  return response.json();
}

const enc = encodeURIComponent;

export const api = {
  listApps: () => getJson("/list-apps"),
  listLoadingApps: () => getJson("/list-apps?detailed=true"),
  listSessions: (app, user) => getJson(`/apps/${enc(app)}/users/${enc(user)}/sessions`),
  getSession: (app, user, sid) => getJson(`/apps/${enc(app)}/users/${enc(user)}/sessions/${enc(sid)}`),
  createSession: (app, user, body) => postJson(`/apps/${enc(app)}/users/${enc(user)}/sessions`, body),
  deleteSession: (app, user, sid) => deleteJson(`/apps/${enc(app)}/users/${enc(user)}/sessions/${enc(sid)}`),
  listArtifacts: (app, user, sid) =>
    getJson(`/apps/${enc(app)}/users/${enc(user)}/sessions/${enc(sid)}/artifacts`),
  getArtifact: (app, user, sid, name) =>
    getJson(`/apps/${enc(app)}/users/${enc(user)}/sessions/${enc(sid)}/artifacts/${name.split("/").map(enc).join("/")}`),
  modelRequest: (eventId) => getJson(`/debug/model_request/${enc(eventId)}`),
  graphSvg: (app) => getText(`/dev/apps/${enc(app)}/graph.svg`),
  graphDot: (app) => getText(`/dev/apps/${enc(app)}/graph.dot`),
};

// POST /run_sse and call onEvent(event) for every `data:` frame as it arrives.
export async function runSse(body, onEvent, signal) {
  const response = await check(
    await fetch("/run_sse", {
      method: "POST",
      headers: headers({ "Content-Type": "application/json", Accept: "text/event-stream" }),
      body: JSON.stringify(body),
      signal,
    }),
  );
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) break;
    buffer += value;
    let end;
    while ((end = buffer.indexOf("\n\n")) >= 0) {
      const frame = buffer.slice(0, end);
      buffer = buffer.slice(end + 2);
      const data = frame
        .split("\n")
        .filter((line) => line.startsWith("data:"))
        .map((line) => line.slice(5).trimStart())
        .join("\n");
      if (data) onEvent(JSON.parse(data));
    }
  }
}
