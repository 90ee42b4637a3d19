"""Who may do what: gateway keys (`keys`: scopes, rpm, whose records a caller reads), the
dashboard's admin session and CSRF check (`sessions`), and the guard in front of every route
that keeps other web pages out (`guard`).

May import: config, errors, health, the board (gateway/board.py), routing. Never the live state
(gateway/state, which imports the caller from here), a format or the panel: the guard is handed
the error renderer it shows refusals with."""
