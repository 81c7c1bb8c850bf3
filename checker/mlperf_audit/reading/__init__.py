"""Reading what PATH holds, all of it hostile: `discovery` finds the files (never following a link
out of PATH), `parser` reads each log once into the model (`cache` keeps what it parsed),
`power_log` reads power logs, `evidence` quotes the lines findings point at, and `yaml_input`
reads the YAML a user gives (claims, rule cases) strictly.

Imports nothing at package level: each command loads only the readers it needs.
"""
