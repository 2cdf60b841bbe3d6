"""Judge calibration: a labelled suite of teacher/candidate run pairs, and how often a judge model
gets their verdicts right (above all: how many regressions it catches). See docs/guides/calibration.md."""
