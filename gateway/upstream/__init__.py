"""The one way out to the model providers: litellm, behind one seam.

- `seam`: the seam itself: `Upstream`, what the gateway asks of it, and `LitellmUpstream`,
  litellm behind it; one call to one model.
- `call`: one call to one model, as given, by either reader; its failures classified.
- `failures`: what a failed call says (its kind, the wait it asks for, its headers).
- `relay`: a route turn's call, relayed piece by piece.
- `setup_queue`: one call's set-up at a time, in arrival order, until its request has left.
- `inline`: the event loop's executor that runs litellm's CPU-only set-up on the loop.
- `direct`: the direct reader: calls to OpenAI-compatible providers sent and read by the
  gateway, litellm building each request (`wire`), answers read as JSON or SSE (`sse_reader`,
  `chunks`), failures made into litellm's own exceptions (`wire_errors`).
- `answer`: a seat's answer, whichever reader read it.
- `translate`: litellm's format adapters (Anthropic, Responses, Gemini to chat and back).
- `providers`: whether litellm knows the provider of each model in a config (check-config).

The only package that imports litellm. May import: errors, config. This file imports none of
its modules: importing one of them (`providers`) must not import litellm with the others.
"""
