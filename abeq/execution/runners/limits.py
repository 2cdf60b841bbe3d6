"""The runner modes' default limits, spelled once (the CLI shows them without importing the runner)."""

RUNNER_TIMEOUT = 900.0  # seconds a runner command may take: an agent CLI on a real task takes minutes
RUNNER_MAX_STEPS = 30  # tool calls a tools-mode run may make
RUNNER_MAX_TOKENS = 200_000  # tokens a tools-mode run may spend, summed over its calls
# a runner sample when a case runs more than once (--runner-samples N > 1): the temperature most
# providers use by default, so N samples show how a model at its usual sampling behaves, not one mode
SAMPLE_TEMPERATURE = 1.0
