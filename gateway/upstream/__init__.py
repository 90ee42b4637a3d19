"""The one way out to the model providers: one seam, two readers behind it.

- `seam`: the seam itself: `Upstream`, what the gateway asks of it, and `UpstreamSeam`, which
  picks each model's reader once and maps every failure through `failures`.
- `litellm/`: litellm's reader (calls sent and read by litellm, on one shared session).
- `direct/`: the direct reader (OpenAI-compatible providers sent and read by the gateway,
  litellm building each request; its failures made into litellm's own exceptions).
- `failures`: the one mapping from a reader's failure to the gateway's UpstreamError tree.
- `chunks`: the typed streamed chunk both readers produce (`Chunk`), and `TurnStream`.
- `answer`: a seat's answer, whichever reader read it, and a seat's stream read into one.
- `relay`: a route turn's stream read chunk by chunk, its failures mapped.
- `capped`: the byte cap an answer is read under; `setup_queue`: calls set up and answers read
  one at a time, in arrival order.
- `params`, `providers`, `translate/`: what litellm knows (a model's parameters, its
  provider, the formats' adapters), asked by the rest of the gateway.

The only package that imports litellm. May import: errors, config. This file imports none of
its modules: importing one of them (`providers`) must not import litellm with the others.
"""
