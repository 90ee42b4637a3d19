"""The suite (contract §20): tasks whose answers are known (a seeded bug and its line, the same
code without it, a true-or-false claim), asked of every model through a seat's own upstream
path, scored from the answers as saved, and read as evidence where no verdict is yet.

`tasks` reads the task files (shipped in `tasks/`, and the user's `suite.dir`); `asking` words
the question and reads the answer; `figures` scores the saved answers per model and shape;
`share` keeps a run within `suite.share` of each model's limits; `run` asks inside the gateway,
one run at a time; `drafts` makes claim tasks of verdicts' claims; `service` is what a worker
holds: runs on request, by schedule and for onboarding, and what GET /bench/suite shows."""
