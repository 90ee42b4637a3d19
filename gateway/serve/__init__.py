"""Running the gateway as a process: the uvicorn server (`server`), its HTTP protocol with
bounded request heads (`connection`), N worker processes on one port (`workers`), what only the
process owner sets (`process`), and the start-up summary and access log (`access_log`).

Outermost with the CLI: may import the app and anything below it."""
