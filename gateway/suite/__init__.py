"""The suite (contract §20): tasks whose answers are known (a seeded bug and its line, the same
code without it, a true-or-false claim), asked of every model through a seat's own upstream
path, scored from the answers as saved, and read as evidence where no verdict is yet.

`tasks` reads the task files (shipped in `tasks/`, and the user's `suite.dir`); `asking` words
the question and reads the answer; `figures` scores the saved answers per model and shape;
`run` asks inside the gateway, one run at a time; `schedule` runs it by itself and onboards
a new model."""
