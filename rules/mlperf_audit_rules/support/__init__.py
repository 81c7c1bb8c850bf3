"""Helpers shared by the built-in rule packs: no rules and no hooks here.

- `history`: the checks the official tools added in later rounds (a finding says when one applies);
- `schemas`: the JSON schemas of system descriptions and `scaling.json`, and their error texts;
- `sources`: reading an implementation's files (launch scripts, Dockerfiles, configurations).
"""
