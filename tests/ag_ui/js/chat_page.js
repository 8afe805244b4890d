// A small chat page on the official @ag-ui/client: messages, the shared state, and one
// frontend tool (pick_color) that the page answers with the colour chosen in its select.
import { HttpAgent } from "@ag-ui/client";

const $ = (id) => document.getElementById(id);
const agent = new HttpAgent({ url: "/ag-ui/helper", threadId: `page-${Date.now()}` });
const pickColor = {
  name: "pick_color",
  description: "Let the user pick a colour in the page.",
  parameters: { type: "object", properties: { hint: { type: "string" } } },
};

function render() {
  $("messages").innerHTML = "";
  for (const m of agent.messages) {
    if (!m.content || (m.role !== "user" && m.role !== "assistant")) continue;
    const li = document.createElement("li");
    li.className = m.role;
    li.textContent = m.content;
    $("messages").appendChild(li);
  }
  $("state").textContent = JSON.stringify(agent.state);
}

agent.subscribe({
  onTextMessageContentEvent: ({ textMessageBuffer }) => { $("streaming").textContent = textMessageBuffer; },
  onMessagesChanged: render,
  onStateChanged: render,
});

async function send() {
  const text = $("input").value;
  $("input").value = "";
  agent.addMessage({ id: crypto.randomUUID(), role: "user", content: text });
  render();
  $("status").textContent = "running";
  let result = await agent.runAgent({ tools: [pickColor] });
  for (;;) {
    const pending = agent.messages
      .flatMap((m) => m.toolCalls ?? [])
      .filter((c) => c.function.name === "pick_color" && !agent.messages.some((m) => m.role === "tool" && m.toolCallId === c.id));
    if (!pending.length) break;
    for (const call of pending) {
      agent.addMessage({ id: crypto.randomUUID(), role: "tool", toolCallId: call.id, content: JSON.stringify({ color: $("color").value }) });
    }
    result = await agent.runAgent({ tools: [pickColor] });
  }
  $("status").textContent = "idle";
  render();
  return result;
}

$("send").addEventListener("click", () => { send().catch((e) => { $("status").textContent = `error: ${e}`; }); });
$("theme").addEventListener("change", () => { agent.setState({ ...agent.state, theme: $("theme").value }); render(); });
$("status").textContent = "idle";
