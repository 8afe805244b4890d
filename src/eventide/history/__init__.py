"""Session history tools: rewind, fork, event compaction and context limits."""
