"""The pull-request gate: which documents a pull request changed (`changes`), what `abeq.toml` asks
(`project`), each run base against head (`run`), the Markdown it says (`comment`) and the pull request
it says it on (`github`). `abeq gate` (abeq.cli.gate) puts them in order."""
