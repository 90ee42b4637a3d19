"""What panels and route mode share about one request and the calls it makes: `learn`, the one
place a call's outcome (an answer's headers, a 429, a context-window refusal) is learned from, so
a panel seat, a route turn and a probe teach the live state and the records the same.

May import: config, errors, state, store, routing. Never the panel, route mode or the runtime
(which builds the learning and hands it the pieces it needs)."""
