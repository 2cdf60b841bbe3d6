"""Test doubles, shipped so that tests, benchmarks and users' own suites share them: a real
OpenAI-compatible HTTP server on loopback (`loopback`), a fake Anthropic Messages API (`anthropic`),
a simulated provider prompt cache (`prompt_cache`), and synthetic runs and sets (`synthetic`). The
scripted model they answer with is a provider like any other (`abeq.models.scripted`, with the
rules it answers abeq's own prompts by); no library module imports this package. Their answers
mean nothing about real models."""
