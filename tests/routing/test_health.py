"""The health rules (contract §18) as a table: a model's record, the outcomes of its calls in
order, and what it is after them."""

from __future__ import annotations

import pytest

from routing.health import (
    BENCHED,
    OK,
    RETIRED,
    Outcome,
    Record,
    Rules,
    connection_back,
    connection_down,
    down_why,
    guard,
    judge,
)

RULES = Rules()


def after(outcomes, rules=RULES, record=None):
    """The record after *outcomes*, each (seconds, failure or None, words, status)."""
    record = record or Record()
    judged = None
    for at, failure, said, status in outcomes:
        judged = judge(record, Outcome(failure, said, status), at, rules)
        record = judged.record
    return judged


def fails(failure, *times, said="", status=None):
    return [(t, failure, said, status) for t in times]


CASES = [
    # (what happens, outcomes, health, next_trial)
    ("two 500s in a row leave it ok", fails("capacity", 0, 1), OK, None),
    ("three transient failures in a row bench it", fails("capacity", 0, 1, 2), BENCHED, 7),
    (
        "an answer between failures starts the count again",
        [*fails("timeout", 0, 1), (2, None, None, 200), *fails("empty", 3, 4)],
        OK,
        None,
    ),
    ("one signin failure benches it at once", fails("signin", 0, status=401), BENCHED, 5),
    ("one entitlement failure benches it at once", fails("entitlement", 0), BENCHED, 5),
    ("rate limits never count", fails("rate_limited", *range(10)), OK, None),
    ("refusals never count", fails("refused", *range(10)), OK, None),
    ("a failed trial doubles the wait", fails("signin", 0, 5), BENCHED, 15),
    ("the wait doubles up to backoff_max_s", fails("signin", 0, 5, 15, 35, 75, 135), BENCHED, 195),
    ("a trial that answers makes it ok", [*fails("signin", 0), (5, None, None, 200)], OK, None),
    ("a 410 retires it at once", fails("gone", 0, status=410), RETIRED, 86400),
    (
        "end-of-life words retire it at once",
        fails("gone", 0, said="This model has reached its end of life", status=404),
        RETIRED,
        86400,
    ),
    (
        "a 404 saying it does not exist benches it until confirmed",
        fails("gone", 0, said="The model `gone` does not exist", status=404),
        BENCHED,
        5,
    ),
    (
        "a second gone failure before confirm_after_s keeps it benched",
        fails("gone", 0, 5, status=404),
        BENCHED,
        15,
    ),
    (
        "a second gone failure confirm_after_s later retires it",
        fails("gone", 0, 600),
        RETIRED,
        87000,
    ),
    (
        "a paywall is confirmed the same way",
        fails("paywalled", 0, 600, said="free period has ended"),
        RETIRED,
        87000,
    ),
    (
        "a paywall after a gone failure is a first paywall failure",
        [*fails("gone", 0), *fails("paywalled", 600)],
        BENCHED,
        610,
    ),
    (
        "a re-probe that answers restores a retired model",
        [*fails("gone", 0, status=410), (86400, None, None, 200)],
        OK,
        None,
    ),
    (
        "a re-probe that fails keeps it retired until the next",
        [*fails("gone", 0, status=410), *fails("capacity", 86400)],
        RETIRED,
        172800,
    ),
]


@pytest.mark.parametrize(
    ("outcomes", "health", "next_trial"), [c[1:] for c in CASES], ids=[c[0] for c in CASES]
)
def test_the_rules(outcomes, health, next_trial):
    record = after(outcomes).record
    assert record.health == health
    assert record.next_trial == next_trial


def test_auto_retire_false_benches_instead_of_retiring():
    rules = Rules(auto_retire=False)
    assert after(fails("gone", 0, status=410), rules).record.health == BENCHED
    assert after(fails("gone", 0, 600, 1200), rules).record.health == BENCHED


def test_a_benching_is_a_change_and_names_why():
    judged = after(fails("capacity", 0, 1, 2, said="upstream exploded"))
    assert judged.changed and judged.record.since == 2
    assert judged.record.why == "3 failures in a row, the last capacity: upstream exploded"
    assert after(fails("capacity", 0, 1)).changed is False


def test_a_gone_failure_asks_for_the_confirming_probe():
    judged = after(fails("gone", 100, said="model not found", status=404))
    assert judged.probe_at == 700


def test_a_retirement_asks_for_the_re_probe():
    assert after(fails("gone", 100, status=410)).probe_at == 100 + 86400


def test_a_benched_model_is_seated_only_once_its_trial_is_due():
    record = after(fails("signin", 0)).record
    assert not record.seatable(4.9) and record.seatable(5)
    assert not after(fails("gone", 0, status=410)).record.seatable(10**9)


def failing(failure, at):
    return after(fails(failure, at)).record


def test_every_model_of_a_connection_refused_its_key_is_check_key():
    state = guard("hub", [failing("signin", 0), failing("signin", 300)])
    assert (state.health, state.why) == ("check_key", "the key for connection hub was refused")


def test_one_model_is_not_a_connection():
    assert guard("hub", [failing("signin", 0)]).health == OK


def test_a_connection_whose_models_all_fail_within_a_minute_is_down():
    assert guard("hub", [failing("capacity", 0), failing("timeout", 59)]).health == "down"
    assert guard("hub", [failing("capacity", 0), failing("timeout", 61)]).health == OK


def test_a_connection_with_one_model_answering_is_ok():
    answered = judge(failing("signin", 0), Outcome(None), 10, RULES).record
    assert guard("hub", [failing("signin", 0), answered]).health == OK


def test_a_down_connections_models_are_benched_naming_it_and_share_one_trial():
    records = {"a": failing("capacity", 0), "b": after(fails("timeout", 1, 2, 3)).record}
    held = connection_down(records, down_why("hub"), 3, RULES)
    assert {r.health for r in held.values()} == {BENCHED}
    assert {r.why for r in held.values()} == {"every model of connection hub failed at once"}
    assert {r.next_trial for r in held.values()} == {3 + 5}  # b's own trial, shared


def test_a_failed_trial_moves_the_whole_connections_trial_on():
    why = down_why("hub")
    records = connection_down(
        {"a": failing("capacity", 0), "b": failing("capacity", 0)}, why, 0, RULES
    )
    tried = judge(records["a"], Outcome("capacity"), 5, RULES).record  # the trial, failed
    held = connection_down({"a": tried, "b": records["b"]}, why, 5, RULES)
    assert held["b"].next_trial == tried.next_trial == 15 and held["b"].backoff == 10
    assert held["a"].why == why  # its trial's failure is the connection's still


def test_a_down_connection_stays_down_while_its_trials_fail_past_a_minute():
    why = down_why("hub")
    records = connection_down(
        {"a": failing("capacity", 0), "b": failing("capacity", 0)}, why, 0, RULES
    )
    tried = judge(records["a"], Outcome("timeout"), 300, RULES).record
    assert guard("hub", [tried, records["b"]]).health == "down"
    answered = judge(tried, Outcome(None), 400, RULES).record
    assert guard("hub", [answered, records["b"]]).health == OK


def test_a_down_connection_that_answers_makes_its_other_models_due_at_once():
    why = down_why("hub")
    records = connection_down(
        {"a": failing("capacity", 0), "b": failing("capacity", 0)}, why, 0, RULES
    )
    answered = judge(records["a"], Outcome(None), 3, RULES).record  # before the shared trial
    back = connection_back({"a": answered, "b": records["b"]}, why, 3)
    assert set(back) == {"b"} and back["b"].seatable(3)


def test_a_404_awaiting_its_confirmation_is_never_due_a_trial_by_traffic():
    record = after(fails("gone", 0, said="The model `x` does not exist", status=404)).record
    assert record.awaiting_confirmation
    assert not record.due(10**9) and not record.seatable(10**9)


def test_a_benched_model_is_due_its_trial_at_next_trial():
    record = after(fails("signin", 0, status=401)).record
    assert not record.due(4.9) and record.due(5) and record.seatable(5)


def test_the_guard_window_is_a_minute_or_the_longest_backoff_if_shorter():
    assert RULES.guard_window_s == 60
    short = Rules(backoff_max_s=2)
    assert guard("hub", [failing("capacity", 0), failing("timeout", 2)], 2).health == "down"
    assert guard("hub", [failing("capacity", 0), failing("timeout", 3)], 2).health == OK
    assert short.guard_window_s == 2
