// Run by node: the official JavaScript A2A SDK's client (@a2a-js/sdk) against an agent.
// Usage: node js_client.mjs SDK_DIR BASE_URL CARD_PATH MODE
//   MODE send:   SendMessage, prints {"state", "texts"}
//   MODE stream: SendStreamingMessage, prints {"kinds", "states", "texts"}
//   MODE cancel: SendMessage with returnImmediately, then CancelTask, prints {"before", "after"}
import { pathToFileURL } from "node:url";
import { join } from "node:path";

const [sdkDir, baseUrl, cardPath, mode] = process.argv.slice(2);
const sdk = await import(
  pathToFileURL(join(sdkDir, "node_modules/@a2a-js/sdk/dist/client/index.js")).href
);

const factory = new sdk.ClientFactory();
const client = await factory.createFromUrl(baseUrl, cardPath);

function message(text, extra = {}) {
  return {
    tenant: "",
    message: {
      messageId: `js-${Date.now()}-${Math.random()}`,
      contextId: "",
      taskId: "",
      role: 1, // ROLE_USER
      parts: [{ content: { $case: "text", value: text }, metadata: undefined, filename: "", mediaType: "" }],
      metadata: undefined,
      extensions: [],
      referenceTaskIds: [],
    },
    configuration: undefined,
    metadata: undefined,
    ...extra,
  };
}

function texts(artifacts) {
  return (artifacts ?? []).flatMap((a) =>
    a.parts.filter((p) => p.content?.$case === "text").map((p) => p.content.value),
  );
}

function taskOf(result) {
  // SendMessageResult is a Task or a Message, by the SDK's own shape.
  if (result?.payload) return result.payload.$case === "task" ? result.payload.value : null;
  return result?.status ? result : null;
}

let out;
if (mode === "send") {
  const task = taskOf(await client.sendMessage(message("What is the weather?")));
  out = { state: task.status.state, texts: texts(task.artifacts) };
} else if (mode === "stream") {
  const kinds = [];
  const states = [];
  const chunks = [];
  for await (const event of client.sendMessageStream(message("What is the weather?"))) {
    const kind = event.payload?.$case;
    kinds.push(kind);
    if (kind === "task") states.push(event.payload.value.status.state);
    if (kind === "statusUpdate") states.push(event.payload.value.status.state);
    if (kind === "artifactUpdate") chunks.push(...texts([event.payload.value.artifact]));
  }
  out = { kinds, states, texts: chunks };
} else if (mode === "cancel") {
  const request = message("Take your time", {
    configuration: {
      acceptedOutputModes: [],
      taskPushNotificationConfig: undefined,
      historyLength: undefined,
      returnImmediately: true,
    },
  });
  const task = taskOf(await client.sendMessage(request));
  const canceled = await client.cancelTask({ tenant: "", id: task.id, metadata: undefined });
  out = { before: task.status.state, after: canceled.status.state, id: task.id };
}
console.log(JSON.stringify(out));
