"""The checks a run makes on both arms: declared checks, code checks and scripts (with their trust),
gradings, and the audit of what the checks found."""
