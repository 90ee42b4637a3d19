"""Route mode: a collection as one tool-calling agent's model (`bench/<c>:route`), its own path
from the endpoint on. What was asked (`ask`), choosing the members (`start`), one member's try up
to its first piece (`member`), when the same member is asked again (`again`), a content filter's
refusal (`filtered`), the turn once a member has it, relayed and recorded (`turn`), what its
stream has said (`answer`), a broken stream continued on the next member (`continuation`) and
its usage summed over the calls (`usage`), the stream's stall and time bounds (`watch`), a turn
nobody answered (`refusal`), the keep-alive reader (`keepalive`), and a member's streamed chunks
read as pieces for the formats that rebuild them (`pieces`).

May import: runtime, state, store, upstream, access, request (what panels share: the body's
checks, hints, the caller), config, errors, routing. Never a format."""
