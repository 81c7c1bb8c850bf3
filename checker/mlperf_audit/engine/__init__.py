"""The engine: walks the discovered tree once, parses each benchmark folder's logs once, asks the
plugins to check every target, and reports a rule that crashed. The built-in `RuleRunner` plugin
runs the selected rules.

Its modules: `plugins` loads the plugins (the hooks in `hookspecs`), `selection` selects the rules
in force, `checks` walks the tree (each benchmark folder in `folders`, parsed once by `loading`,
shared among processes by `workers`), `runner` runs the rules of a scope, `crashes` isolates a rule
that crashes, `findings` and `causes` assemble the findings, `checkcache` keeps whole outcomes and
`api` offers all of it to the commands.

Imports nothing at package level, so that `import mlperf_audit` does not load the engine.
"""
