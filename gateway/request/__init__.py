"""What a panel and a route turn share from the moment a request's body is in: the body reader
that parses it off the event loop when it is heavy (`body`), strict JSON and the bounds every
body is read within (`bounds`), the checks both paths make (`checks`), the hint fields a model
may or may not take and how the dropped ones are named (`hints`), earlier tool turns as text
(`tool_text`), and who is asking (`client`).

It sits below gateway/panel and gateway/route (both import it) and below the live state and the
keys, which count and find a `Client`. May import: config, errors, routing. Pure but for the
body reader's child process, and nothing here imports litellm: the child imports this package,
and litellm would cost it seconds and hundreds of megabytes."""
