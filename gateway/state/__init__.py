"""The live state: where cooldowns, rpm windows, rotation and route conversations are kept.

Why a seam: one gateway keeps them on its board (gateway/board.py), in memory its workers
share; several replicas on several machines keep them in Redis (`state: redis://...`, contract §15).
Every reader of the live figures (RateLimits, Figures, Conversations) reads the board either way:
with Redis, the board is this worker's mirror, refreshed by each round trip, and the few steps
that must see every replica (seating, taking an rpm slot, a conversation's next turn) are one
round trip each. Changes that need no answer (a seat ended, a cooldown learned, a verdict) ride
along on the next one.

The modules: `live` (the interface), `local` (the board's) and `redis_state`/`redis_link`/`chairs`
(Redis's), `limits` and `quota_signals` (cooldowns, caps, what providers say of them), `figures`
(what routing reads), `conversations` (route mode's), `admission` (a worker's panels in flight),
and `learn`, the one place a call's outcome (a panel seat's, a route turn's, a probe's) is
learned from, onto this state and into the records.
The board itself sits below both this package and access (gateway/board.py), which count on it.

May import: access (keys), request (the `Client` who asks), the board (gateway/board.py: the
shared memory), store (the records `learn` keeps what it learned in), config, errors, health,
routing.
"""
