"""Route mode: a collection as one tool-calling agent's model (`bench/<c>:route`), its own path
from the endpoint on. What was asked (`ask`), choosing and trying the members (`start`), the
turn once a member has it, relayed and recorded (`turn`), the keep-alive reader (`keepalive`),
and a member's streamed chunks read as pieces for the formats that rebuild them (`pieces`).

May import: runtime, state, store, upstream, access, config, errors, routing. Never a format."""
