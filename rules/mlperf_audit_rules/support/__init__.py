"""Helpers shared by the built-in rule packs: no rules and no hooks here.

- `history`: the checks the official tools added in later rounds (a finding says when one applies);
- `schemas`: the JSON schemas of system descriptions and `scaling.json`, and their error texts;
- reading an implementation's files: `code_text` (a small text file, its line endings made one kind),
  `shell` (launch configurations read as the shell would, compared with the logs), `dockerfile`
  (base images, pins, releases) and `tracing` (which implementation and configuration a result ran);
- `official_compliance`: the official compliance rule files, interpreted, and the CMP code table
  (`compliance_data` regenerates the shipped data; no check runs it);
- `convergence`: run convergence points and the official RCP verdicts;
- `work`: time-to-train, a run's work, the quality target and the envelope verdict;
- `directives`: the `package_checker_params` directives in force;
- `constants`: the dataset constants of every round and benchmark.

Packs import from here and never from each other (`[tool.importlinter]`), so a disabled pack leaves
none of its code running; nothing here imports a pack.
"""
