//! Table tests of the lifecycle: every event applied to every state, pinned
//! as one snapshot so a changed rule shows up as a readable diff.

use expect_test::expect;

use super::*;

fn event(kind: EventKind, actor: Actor) -> EventData {
    EventData { kind, actor, at: Timestamp(1000), reason: Some("because".into()) }
}

fn state(status: Status, provenance: Provenance) -> NoteState {
    NoteState { status, status_at: Timestamp(10), status_reason: None, provenance, live_since: Timestamp(10) }
}

fn outcome(result: Result<NoteState, TransitionError>) -> String {
    match result {
        Ok(s) => format!("ok -> {} ({})", s.status, s.provenance),
        Err(e) => format!("error: {e}"),
    }
}

#[test]
fn a_note_is_proposed_only_as_it_is_written_and_accepted_only_by_a_person() {
    let written = created(Provenance::Agent, Timestamp(5));
    let propose = EventData { kind: EventKind::Proposed, actor: Actor::Agent, at: Timestamp(5), reason: None };
    let proposed = apply(&written, &propose).unwrap();
    assert_eq!(proposed.status, Status::Proposed);
    let later = EventData { at: Timestamp(6), ..propose.clone() };
    assert!(apply(&written, &later).is_err(), "an older active note cannot become a proposal");
    let accept = EventData { kind: EventKind::Accepted, actor: Actor::Human, at: Timestamp(9), reason: None };
    let accepted = apply(&proposed, &accept).unwrap();
    assert_eq!(
        (accepted.status, accepted.provenance, accepted.live_since),
        (Status::Active, Provenance::Human, Timestamp(9))
    );
    let folded = fold([
        &EventData { kind: EventKind::Created { provenance: Provenance::Agent }, ..propose.clone() },
        &propose,
        &accept,
    ]);
    assert_eq!(folded.unwrap(), accepted, "the log replays to the same state");
}

#[test]
fn every_event_against_every_state() {
    let statuses = [
        Status::Active,
        Status::StaleFlagged,
        Status::Revoked,
        Status::Expired,
        Status::Superseded { by: 9 },
        Status::Proposed,
    ];
    let events = [
        ("supersede", event(EventKind::Superseded { by: 7 }, Actor::Agent)),
        ("revoke", event(EventKind::Revoked, Actor::Agent)),
        ("flag stale", event(EventKind::StaleFlagged, Actor::Agent)),
        ("reinstate", event(EventKind::Reinstated, Actor::Agent)),
        ("expire", event(EventKind::Expired, Actor::System)),
        ("promote to agent", event(EventKind::Promoted { to: Provenance::Agent }, Actor::Agent)),
        ("propose", event(EventKind::Proposed, Actor::Agent)),
        ("accept", event(EventKind::Accepted, Actor::Human)),
        ("accept by agent", event(EventKind::Accepted, Actor::Agent)),
    ];
    let mut table = String::new();
    for status in statuses {
        for (name, ev) in &events {
            let line = format!(
                "{:<16} + {name:<17} => {}\n",
                status.to_string(),
                outcome(apply(&state(status, Provenance::Auto), ev))
            );
            table.push_str(&line);
        }
    }
    expect![[r#"
        active           + supersede         => ok -> superseded by #7 (auto)
        active           + revoke            => ok -> revoked (auto)
        active           + flag stale        => ok -> flagged stale (auto)
        active           + reinstate         => error: cannot reinstate a note that is active; only a revoked, expired or stale note can be reinstated
        active           + expire            => ok -> expired (auto)
        active           + promote to agent  => ok -> active (agent)
        active           + propose           => error: cannot propose a note that is active; a note is proposed only as it is written, under review
        active           + accept            => error: cannot accept a note that is active; only a proposed note can be accepted
        active           + accept by agent   => error: only a person accepts a proposal: it is their review of what an agent wrote
        flagged stale    + supersede         => error: cannot supersede a note that is flagged stale; only an active or proposed note can be superseded
        flagged stale    + revoke            => ok -> revoked (auto)
        flagged stale    + flag stale        => error: cannot flag as stale a note that is flagged stale; only an active note can be flagged stale
        flagged stale    + reinstate         => ok -> active (auto)
        flagged stale    + expire            => ok -> expired (auto)
        flagged stale    + promote to agent  => ok -> flagged stale (agent)
        flagged stale    + propose           => error: cannot propose a note that is flagged stale; a note is proposed only as it is written, under review
        flagged stale    + accept            => error: cannot accept a note that is flagged stale; only a proposed note can be accepted
        flagged stale    + accept by agent   => error: only a person accepts a proposal: it is their review of what an agent wrote
        revoked          + supersede         => error: cannot supersede a note that is revoked; only an active or proposed note can be superseded
        revoked          + revoke            => error: cannot revoke a note that is revoked; only an active, stale or proposed note can be revoked
        revoked          + flag stale        => error: cannot flag as stale a note that is revoked; only an active note can be flagged stale
        revoked          + reinstate         => ok -> active (auto)
        revoked          + expire            => error: cannot expire a note that is revoked; only an active or stale note can expire
        revoked          + promote to agent  => error: cannot promote a note that is revoked; only an active or stale note can be promoted
        revoked          + propose           => error: cannot propose a note that is revoked; a note is proposed only as it is written, under review
        revoked          + accept            => error: cannot accept a note that is revoked; only a proposed note can be accepted
        revoked          + accept by agent   => error: only a person accepts a proposal: it is their review of what an agent wrote
        expired          + supersede         => error: cannot supersede a note that is expired; only an active or proposed note can be superseded
        expired          + revoke            => error: cannot revoke a note that is expired; only an active, stale or proposed note can be revoked
        expired          + flag stale        => error: cannot flag as stale a note that is expired; only an active note can be flagged stale
        expired          + reinstate         => ok -> active (auto)
        expired          + expire            => error: cannot expire a note that is expired; only an active or stale note can expire
        expired          + promote to agent  => error: cannot promote a note that is expired; only an active or stale note can be promoted
        expired          + propose           => error: cannot propose a note that is expired; a note is proposed only as it is written, under review
        expired          + accept            => error: cannot accept a note that is expired; only a proposed note can be accepted
        expired          + accept by agent   => error: only a person accepts a proposal: it is their review of what an agent wrote
        superseded by #9 + supersede         => error: cannot supersede a note that is superseded by #9; only an active or proposed note can be superseded
        superseded by #9 + revoke            => error: cannot revoke a note that is superseded by #9; only an active, stale or proposed note can be revoked
        superseded by #9 + flag stale        => error: cannot flag as stale a note that is superseded by #9; only an active note can be flagged stale
        superseded by #9 + reinstate         => error: cannot reinstate a note that is superseded by #9; only a revoked, expired or stale note can be reinstated
        superseded by #9 + expire            => error: cannot expire a note that is superseded by #9; only an active or stale note can expire
        superseded by #9 + promote to agent  => error: cannot promote a note that is superseded by #9; only an active or stale note can be promoted
        superseded by #9 + propose           => error: cannot propose a note that is superseded by #9; a note is proposed only as it is written, under review
        superseded by #9 + accept            => error: cannot accept a note that is superseded by #9; only a proposed note can be accepted
        superseded by #9 + accept by agent   => error: only a person accepts a proposal: it is their review of what an agent wrote
        proposed, awaiting review + supersede         => ok -> superseded by #7 (auto)
        proposed, awaiting review + revoke            => ok -> revoked (auto)
        proposed, awaiting review + flag stale        => error: cannot flag as stale a note that is proposed, awaiting review; only an active note can be flagged stale
        proposed, awaiting review + reinstate         => error: cannot reinstate a note that is proposed, awaiting review; only a revoked, expired or stale note can be reinstated
        proposed, awaiting review + expire            => error: cannot expire a note that is proposed, awaiting review; only an active or stale note can expire
        proposed, awaiting review + promote to agent  => error: cannot promote a note that is proposed, awaiting review; only an active or stale note can be promoted
        proposed, awaiting review + propose           => error: cannot propose a note that is proposed, awaiting review; a note is proposed only as it is written, under review
        proposed, awaiting review + accept            => ok -> active (human)
        proposed, awaiting review + accept by agent   => error: only a person accepts a proposal: it is their review of what an agent wrote
    "#]]
    .assert_eq(&table);
}

#[test]
fn promotion_table() {
    let mut table = String::new();
    for from in Provenance::ALL {
        for to in Provenance::ALL {
            for actor in [Actor::Agent, Actor::Human] {
                let ev = event(EventKind::Promoted { to: *to }, actor);
                let line = format!(
                    "{from:<11} -> {to:<11} by {actor:<5} => {}\n",
                    outcome(apply(&state(Status::Active, *from), &ev))
                );
                table.push_str(&line);
            }
        }
    }
    expect![[r#"
        auto        -> auto        by agent => error: cannot promote from auto to auto; promotion goes one step up, to agent
        auto        -> auto        by human => error: cannot promote from auto to auto; promotion goes one step up, to agent
        auto        -> agent       by agent => ok -> active (agent)
        auto        -> agent       by human => ok -> active (agent)
        auto        -> user-stated by agent => error: cannot promote from auto to user-stated; promotion goes one step up, to agent
        auto        -> user-stated by human => error: cannot promote from auto to user-stated; promotion goes one step up, to agent
        auto        -> human       by agent => error: cannot promote from auto to human; promotion goes one step up, to agent
        auto        -> human       by human => error: cannot promote from auto to human; promotion goes one step up, to agent
        agent       -> auto        by agent => error: cannot promote from agent to auto; promotion goes one step up, to human
        agent       -> auto        by human => error: cannot promote from agent to auto; promotion goes one step up, to human
        agent       -> agent       by agent => error: cannot promote from agent to agent; promotion goes one step up, to human
        agent       -> agent       by human => error: cannot promote from agent to agent; promotion goes one step up, to human
        agent       -> user-stated by agent => error: cannot promote from agent to user-stated; promotion goes one step up, to human
        agent       -> user-stated by human => error: cannot promote from agent to user-stated; promotion goes one step up, to human
        agent       -> human       by agent => error: provenance 'human' is reached only by a person (pass --as-human when you are one)
        agent       -> human       by human => ok -> active (human)
        user-stated -> auto        by agent => error: cannot promote from user-stated to auto; promotion goes one step up, to human
        user-stated -> auto        by human => error: cannot promote from user-stated to auto; promotion goes one step up, to human
        user-stated -> agent       by agent => error: cannot promote from user-stated to agent; promotion goes one step up, to human
        user-stated -> agent       by human => error: cannot promote from user-stated to agent; promotion goes one step up, to human
        user-stated -> user-stated by agent => error: cannot promote from user-stated to user-stated; promotion goes one step up, to human
        user-stated -> user-stated by human => error: cannot promote from user-stated to user-stated; promotion goes one step up, to human
        user-stated -> human       by agent => error: provenance 'human' is reached only by a person (pass --as-human when you are one)
        user-stated -> human       by human => ok -> active (human)
        human       -> auto        by agent => error: cannot promote a note that is already human; nothing is above it
        human       -> auto        by human => error: cannot promote a note that is already human; nothing is above it
        human       -> agent       by agent => error: cannot promote a note that is already human; nothing is above it
        human       -> agent       by human => error: cannot promote a note that is already human; nothing is above it
        human       -> user-stated by agent => error: cannot promote a note that is already human; nothing is above it
        human       -> user-stated by human => error: cannot promote a note that is already human; nothing is above it
        human       -> human       by agent => error: cannot promote a note that is already human; nothing is above it
        human       -> human       by human => error: cannot promote a note that is already human; nothing is above it
    "#]]
    .assert_eq(&table);
}

#[test]
fn revoke_and_stale_need_a_reason() {
    let mut ev = event(EventKind::Revoked, Actor::Agent);
    ev.reason = Some("  ".into());
    assert_eq!(
        apply(&state(Status::Active, Provenance::Agent), &ev),
        Err(TransitionError::Rule(RuleError::MissingReason("revocation")))
    );
    ev.kind = EventKind::StaleFlagged;
    ev.reason = None;
    assert_eq!(
        apply(&state(Status::Active, Provenance::Agent), &ev),
        Err(TransitionError::Rule(RuleError::MissingReason("stale flag")))
    );
}

#[test]
fn fold_replays_a_log_and_tracks_reason_time_and_live_period() {
    let log = [
        EventData {
            kind: EventKind::Created { provenance: Provenance::Auto },
            actor: Actor::Agent,
            at: Timestamp(1),
            reason: None,
        },
        EventData {
            kind: EventKind::StaleFlagged,
            actor: Actor::System,
            at: Timestamp(2),
            reason: Some("lock.rs changed".into()),
        },
        EventData { kind: EventKind::Reinstated, actor: Actor::Human, at: Timestamp(3), reason: None },
        EventData {
            kind: EventKind::Promoted { to: Provenance::Agent },
            actor: Actor::Agent,
            at: Timestamp(4),
            reason: None,
        },
        EventData { kind: EventKind::Revoked, actor: Actor::Human, at: Timestamp(5), reason: Some("wrong".into()) },
    ];
    let state = fold(&log).unwrap();
    assert_eq!(
        state,
        NoteState {
            status: Status::Revoked,
            status_at: Timestamp(5),
            status_reason: Some("wrong".into()),
            provenance: Provenance::Agent,
            live_since: Timestamp(3),
        }
    );
}

#[test]
fn fold_rejects_logs_that_do_not_start_with_created() {
    let revoke = event(EventKind::Revoked, Actor::Agent);
    assert_eq!(fold(std::slice::from_ref(&revoke)), Err(TransitionError::CreatedNotFirst));
    assert_eq!(fold(&[]), Err(TransitionError::CreatedNotFirst));
    let created = EventData { kind: EventKind::Created { provenance: Provenance::Agent }, ..revoke };
    assert_eq!(fold(&[created.clone(), created]), Err(TransitionError::CreatedNotFirst));
}

#[test]
fn fold_stops_at_the_first_illegal_event() {
    let created = EventData {
        kind: EventKind::Created { provenance: Provenance::Agent },
        actor: Actor::Agent,
        at: Timestamp(1),
        reason: None,
    };
    let reinstate = event(EventKind::Reinstated, Actor::Agent);
    assert!(matches!(fold(&[created, reinstate]), Err(TransitionError::Illegal { .. })));
}
