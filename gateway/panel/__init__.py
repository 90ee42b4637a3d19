"""A panel, from what was asked to every answer: the `Ask` and the checks only a panel makes
(`ask`), choosing and marking the seats (`seating`), calling them all at once with reserves
(`fanout`), the run a renderer follows (`run`), one merged answer (`merger`), the markdown and
`bench` field every format shows (`reply`), and provider notices told from answers (`notices`).

One path for plain and streamed replies. May import: runtime, state, store, upstream, access,
request (what route mode shares: the body's checks, hints, the caller), config, errors,
routing. Never a format: formats read into an Ask and render a run."""
