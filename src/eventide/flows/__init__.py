"""The steps of an LLM agent's turn: request building, model call, tool dispatch, transfer."""
