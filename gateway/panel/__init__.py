"""A panel, from what was asked to every answer: the `Ask` and the checks every reader shares
(`ask`), choosing and marking the seats (`seating`), calling them all at once with reserves
(`fanout`), the run a renderer follows (`run`), one merged answer (`merger`), the markdown and
`bench` field every format shows (`reply`), and provider notices told from answers (`notices`).

One path for plain and streamed replies. May import: runtime, state, store, upstream, access
(the caller), config, errors, routing. Never a format: formats read into an Ask and render a run."""
