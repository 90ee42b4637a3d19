"""The dashboard (contract §13): the page and its `/ui/...` routes (`page`), its Usage section
(`usage`), answers' markdown shown safely (`markdown`); templates and script under `ui/`.

May import: endpoints (the records' queries it shares with `/bench`), records, access, store,
runtime, errors."""
