// Drives an Eventide AG-UI endpoint with the official @ag-ui/client (HttpAgent), as a front
// end would: a turn, a frontend-tool round trip, a shared-state update. Prints one JSON line
// per step for the Python test to check. Usage: node ag_ui_client_conversation.mjs URL
import { HttpAgent } from "@ag-ui/client";

const url = process.argv[2];
const agent = new HttpAgent({ url, threadId: `js-${Date.now()}`, initialState: {} });
const report = (step, data) => console.log(JSON.stringify({ step, ...data }));
const lastText = () => {
  const said = agent.messages.filter((m) => m.role === "assistant" && m.content);
  return said.length ? said[said.length - 1].content : null;
};

// 1. A turn: a tool the agent runs itself changes the shared state.
agent.addMessage({ id: "u1", role: "user", content: "mood cheerful" });
const first = await agent.runAgent();
report("turn", { text: lastText(), state: agent.state, newMessages: first.newMessages.length });

// 2. A frontend tool: the agent calls the page's tool, the page answers in the next run.
const pickColor = {
  name: "pick_color",
  description: "Let the user pick a colour in the page.",
  parameters: { type: "object", properties: { hint: { type: "string" } } },
};
agent.addMessage({ id: "u2", role: "user", content: "color please" });
await agent.runAgent({ tools: [pickColor] });
const call = agent.messages.flatMap((m) => m.toolCalls ?? []).find((c) => c.function.name === "pick_color");
agent.addMessage({ id: "t1", role: "tool", toolCallId: call.id, content: JSON.stringify({ color: "teal" }) });
await agent.runAgent({ tools: [pickColor] });
report("frontend_tool", { call: call.function, text: lastText() });

// 3. Shared state: the page changes the state; the agent's next turn sees it.
agent.setState({ ...agent.state, theme: "solarized" });
agent.addMessage({ id: "u3", role: "user", content: "theme?" });
await agent.runAgent();
report("state", { text: lastText(), state: agent.state });
