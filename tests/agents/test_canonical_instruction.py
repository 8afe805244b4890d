"""``LlmAgent.canonical_instruction`` / ``canonical_global_instruction`` return google-adk's
pair ``(text, bypass_state_injection)``: False for a string instruction (its placeholders are
filled from state), True for an instruction provider (its text is used as it is)."""

from __future__ import annotations

from eventide import InMemorySessionService, LlmAgent, ReadonlyContext
from eventide.contexts import InvocationContext


async def _context(agent: LlmAgent) -> ReadonlyContext:
    service = InMemorySessionService()
    session = await service.create_session(app_name="app", user_id="u", state={"city": "Oslo"})
    ictx = InvocationContext(
        invocation_id="inv", agent=agent, session=session, session_service=service
    )
    return ReadonlyContext(ictx)


async def test_a_string_instruction_is_not_bypassed() -> None:
    agent = LlmAgent(name="a", instruction="Weather in {city}", global_instruction="Be {tone?}")
    ctx = await _context(agent)
    assert await agent.canonical_instruction(ctx) == ("Weather in {city}", False)
    assert await agent.canonical_global_instruction(ctx) == ("Be {tone?}", False)


async def test_a_provider_instruction_bypasses_state_injection() -> None:
    def sync_provider(ctx: ReadonlyContext) -> str:
        return f"literal {{city}} for {ctx.state['city']}"

    async def async_provider(ctx: ReadonlyContext) -> str:
        return "async {city}"

    agent = LlmAgent(name="a", instruction=sync_provider, global_instruction=async_provider)
    ctx = await _context(agent)
    assert await agent.canonical_instruction(ctx) == ("literal {city} for Oslo", True)
    assert await agent.canonical_global_instruction(ctx) == ("async {city}", True)
