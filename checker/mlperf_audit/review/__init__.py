"""A reviewer's domain, above the scores and below the formats and commands: `peers` (each result
against its peers on the same accelerator), `comparison` (two trees side by side) and `claims`
(a verdict per claim). Knows no format and no command.
"""
