"""The engine: loads the plugins (`plugins`, the hooks in `hookspecs`), selects the rules in force
(`selection`), walks the discovered tree once and checks every target (`checks`: each benchmark
folder in `folders`, parsed once by `loading`, shared among processes by `workers`), runs the rules
of a scope (`runner`), isolates a rule that crashes (`crashes`), assembles the findings (`findings`,
`causes`), keeps whole outcomes (`checkcache`) and offers all of it to the commands (`api`).

Imports nothing at package level, so that `import mlperf_audit` does not load the engine.
"""
