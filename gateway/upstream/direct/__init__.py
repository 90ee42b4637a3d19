"""The direct reader: calls to OpenAI-compatible providers sent and read by the gateway itself,
one of the seam's two readers (the default for them: `upstream_reader: auto`).

- `reader`: `DirectReader`, its session and each model's target; `reads_direct`, which models
  it reads.
- `wire`: the request as litellm would send it, built by litellm's own provider config.
- `sse_reader`: a streamed answer read off the wire into typed `Chunk`s.
- `wire_errors`: a failure read here made into the exception litellm would have raised, so the
  seam maps both readers' failures the same way (gateway/upstream/failures.py).
"""
