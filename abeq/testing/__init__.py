"""Test doubles, shipped so that tests, benchmarks and users' own suites share them: the scripted
model's rules (`scripted`), a real OpenAI-compatible HTTP server on loopback (`loopback`), and
synthetic runs and sets (`synthetic`). Their answers mean nothing about real models."""
