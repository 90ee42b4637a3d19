"""Client formats: one folder per format, each with the same halves.

- **read** (`read.py`): the format's request -> an `Ask` (gateway/panel/ask.py), in two steps:
  `check`, pure and bounded, refuses a body too large in structure and returns what `read`
  needs (it may run in another process: gateway/request/body.py); then `read` makes the Ask
  from that and the headers. Chat, completions and Ollama check every field in `check`; Anthropic,
  Responses and Gemini translate through litellm, which the child process must not import, so
  their `check` is the generic bound (`request.bounds.bounded`) and their own fields are checked in
  `read`. Either way every format's messages and sampling pass the shared chat checks;
- **render** (`render.py`): a `PanelRun` -> the format's reply, plain or streamed from the same
  run, and its errors in its own shape;
- **route** (`route.py`): an agent's turn both ways (gateway/route/): `read_route` the request
  as a `RouteAsk`, `render_route` the member's reply.

Each format package is a `Format` (Ollama's two, `CHAT` and `GENERATE`, and Gemini's, made per
request because the collection is in the path, are objects). The folders: `chat`,
`completions` (no tools: its route half refuses), `responses`, `anthropic`, `ollama`, `gemini`;
`sse` is what the SSE formats share (chat and completions one stream writer).

An error raised before any format has read the request (the guard's 403 and 415, the app's 404,
405 and 500) is still the caller's: `error_renderer_for(path)` picks the format by the path the
client called, so an Anthropic client gets `{"type": "error", ...}` and its SDK raises the
right exception, not a JSON parse error on OpenAI's shape.

May import: panel, route, records, access, state, upstream (litellm's format adapters), runtime,
config, errors, routing.
"""
