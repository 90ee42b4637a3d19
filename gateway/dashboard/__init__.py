"""The dashboard (contract §13): the page and its `/ui/...` routes (`page`), each panel's judging
page (`judging`), what the pages share (`views`: templates, headers, who may use them, seats named
or blind), the Models section (`models`) and its health with the action-needed banner
(`health`), the Usage section (`usage`), answers' markdown shown safely with their claims
(`markdown`); templates and scripts under `ui/`.

May import: endpoints (the records' queries it shares with `/bench`), records, access, store,
runtime, errors."""
