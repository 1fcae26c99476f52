"""The SWE-bench agent: a tool-calling loop over a fast raw HTTP client, plus the `gold` and `empty` controls.

`eval.agent.client` speaks the OpenAI chat-completions wire format with aiohttp (the openai SDK's per-request
conversion costs ~8 ms of CPU with a long history; see docs/using/rollouts.md), `eval.agent.toolcall` is the loop,
`eval.agent.controls` the control agents that validate environments and grading.
"""
