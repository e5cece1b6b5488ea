//! The mirror against a real store: a golden rendering of every kind and
//! state, ordering across supersession, byte stability (VACUUM), atomic
//! 0444 writes, the recorded epoch, and the debounced sync noticing this
//! process's and another process's writes. On a SQLite file, and (run by
//! `scripts/with-postgres`) on PostgreSQL (`backend`).

mod backend;

use std::os::unix::fs::PermissionsExt;
use std::sync::mpsc;
use std::time::Duration;

use expect_test::expect_file;
use mnemo_core::{Actor, Anchor, EventData, EventKind, Kind, NewNote, Priority, Provenance, Timestamp};
use mnemo_store::document::{DocumentKind, render_workspace};
use mnemo_store::mirror::sync::{MirrorEvent, MirrorSync};
use mnemo_store::mirror::{MirrorError, MirrorTarget, export, is_behind, keep_current, publish};
use mnemo_store::workspace::Workspace;
use mnemo_store::{Scope, Store};

const DAY: i64 = 86_400;
const AUG_1: i64 = 1_785_542_400;

struct Fixture {
    _dir: tempfile::TempDir,
    store_path: std::path::PathBuf,
    store: Store,
    workspace: Workspace,
}

fn fixture() -> Fixture {
    let dir = tempfile::tempdir().unwrap();
    let root = dir.path().canonicalize().unwrap().join("larder");
    std::fs::create_dir_all(root.join("server/src")).unwrap();
    std::fs::create_dir_all(dir.path().join("data")).unwrap();
    let store_path = backend::store_location(dir.path(), "data/memory.db");
    let store = Store::open(&store_path).unwrap();
    let workspace = Workspace::resolve(Some(root.to_str().unwrap()), &root).unwrap();
    Fixture { _dir: dir, store_path, store, workspace }
}

fn note(kind: Kind, priority: Priority, title: &str, body: &str) -> NewNote {
    NewNote {
        kind,
        priority,
        title: title.into(),
        body: body.into(),
        provenance: Provenance::Agent,
        quote: None,
        anchors: vec![],
    }
}

fn event(kind: EventKind, day: i64, reason: Option<&str>) -> EventData {
    EventData { kind, actor: Actor::Human, at: Timestamp(AUG_1 + day * DAY + 3600), reason: reason.map(str::to_string) }
}

/// A small store with every kind and every state, written through the one write path.
fn populate(f: &mut Fixture) {
    let ws = f.workspace.id.clone();
    let scope = Scope::Workspace(ws.clone());
    f.store
        .write(|w| {
            let at = |day: i64| Timestamp(AUG_1 + day * DAY + 7 * 3600);
            w.create(
                &ws,
                note(
                    Kind::Directive,
                    Priority::High,
                    "Run tests inside the venv, not the global interpreter.",
                    "The global python lacks the pinned deps; `make test` activates .venv first.",
                ),
                Actor::Agent,
                at(0),
            )?;
            let task = w.create(
                &ws,
                note(Kind::Task, Priority::Low, "Port the segment cache to the new index", "Step 2 of 3 done."),
                Actor::Agent,
                at(1),
            )?;
            let mut lock =
                note(Kind::Gotcha, Priority::Medium, "Workspace lock must be released before daemon restart.", "");
            lock.anchors = vec![Anchor {
                path: "server/src/lock.rs".into(),
                start_line: 10,
                end_line: 24,
                content_sha256: Some("00".into()),
            }];
            let lock = w.create(&ws, lock, Actor::Agent, at(2))?;
            let finding = w.create(
                &ws,
                note(
                    Kind::Finding,
                    Priority::Medium,
                    "Index rebuild reuses the embed cache on unchanged files.",
                    "Measured: 4.1 s → 0.6 s.\n\n## Not a heading\n- not an entry\n  indented",
                ),
                Actor::Agent,
                at(2),
            )?;
            w.create(
                &ws,
                note(Kind::Reference, Priority::Low, "Hyper 1.x upgrade guide · see [#12] and `docs/hyper.md`", ""),
                Actor::Agent,
                at(3),
            )?;
            let decision = w.create(
                &ws,
                note(Kind::Decision, Priority::High, "Use rustls, not openssl", "Static builds."),
                Actor::Agent,
                at(4),
            )?;
            let ops = w.create(
                &ws,
                note(
                    Kind::Operational,
                    Priority::Medium,
                    "Deploys go through the helm chart in larder-ops",
                    "Überprüfen: 東京 region first 🙂",
                ),
                Actor::Agent,
                at(5),
            )?;
            w.append(&scope, lock, event(EventKind::Revoked, 8, Some("wrong lock order")))?;
            w.append(&scope, task, event(EventKind::Expired, 31, Some("task notes expire")))?;
            w.append(&scope, finding, event(EventKind::StaleFlagged, 9, Some("cache.rs changed")))?;
            // Supersession moves the decision to another section with a higher id.
            w.supersede(
                &scope,
                decision,
                note(Kind::Directive, Priority::High, "Build with rustls only", "Static builds; openssl is banned."),
                Actor::Human,
                Timestamp(AUG_1 + 10 * DAY),
                None,
            )?;
            w.append(&scope, ops, event(EventKind::Promoted { to: Provenance::Human }, 6, None))?;
            Ok(())
        })
        .unwrap();
}

fn mirror_text(f: &Fixture) -> String {
    render_workspace(&f.store, &f.workspace, DocumentKind::Mirror).unwrap().text
}

#[test]
fn golden_mirror_of_every_kind_and_state() {
    let mut f = fixture();
    populate(&mut f);
    expect_file!["golden/mirror.md"].assert_eq(&mirror_text(&f));
}

#[test]
fn golden_checkout_carries_workspace_and_epoch() {
    let mut f = fixture();
    populate(&mut f);
    let checkout = render_workspace(&f.store, &f.workspace, DocumentKind::Checkout).unwrap();
    let header = checkout.text.lines().next().unwrap();
    assert_eq!(header, format!("<!-- mnemo checkout · workspace {} · epoch 1 -->", f.workspace.id));
    assert_eq!(
        checkout.text.split_once('\n').unwrap().1,
        mirror_text(&f).split_once('\n').unwrap().1,
        "only line 1 differs"
    );
}

#[test]
fn rendering_is_byte_stable_across_vacuum_and_reopen() {
    let mut f = fixture();
    populate(&mut f);
    let before = mirror_text(&f);
    f.store = Store::open(&f.store_path).unwrap();
    rusqlite::Connection::open(f.store.path()).unwrap().execute_batch("VACUUM; REINDEX; ANALYZE;").unwrap();
    assert_eq!(mirror_text(&f), before);
    f.store = Store::open(&f.store_path).unwrap();
    assert_eq!(mirror_text(&f), before);
}

#[test]
fn an_empty_workspace_renders_seven_empty_sections() {
    let f = fixture();
    let text = mirror_text(&f);
    let headings: Vec<&str> = text.lines().filter(|l| l.starts_with("## ")).collect();
    assert_eq!(
        headings,
        ["## Directives", "## Tasks", "## Gotchas", "## Findings", "## References", "## Decisions", "## Operational"]
    );
    assert!(text.ends_with("## Operational\n"));
}

#[test]
fn export_writes_atomically_read_only_and_records_the_epoch() {
    let mut f = fixture();
    let target = MirrorTarget::resolve(&f.workspace, std::path::Path::new("MEMORY.md")).unwrap();
    assert!(is_behind(&f.store, &target).unwrap(), "never rendered");
    let first = export(&f.store, &target).unwrap();
    assert!(first.written);
    assert_eq!(std::fs::metadata(&target.path).unwrap().permissions().mode() & 0o777, 0o444);
    assert!(!is_behind(&f.store, &target).unwrap());
    let again = export(&f.store, &target).unwrap();
    assert!(!again.written, "unchanged bytes are not rewritten");
    populate(&mut f);
    assert!(is_behind(&f.store, &target).unwrap());
    let second = export(&f.store, &target).unwrap();
    assert!(second.written);
    assert_eq!(second.epoch, 1);
    assert_eq!(std::fs::read_to_string(&target.path).unwrap(), mirror_text(&f));
    let leftovers: Vec<_> = std::fs::read_dir(target.path.parent().unwrap())
        .unwrap()
        .filter_map(|e| {
            let name = e.unwrap().file_name().to_string_lossy().into_owned();
            name.ends_with(".tmp").then_some(name)
        })
        .collect();
    assert!(leftovers.is_empty(), "{leftovers:?}");
}

#[test]
fn an_export_brings_the_file_it_published_up_to_date_unless_someone_changed_it() {
    let mut f = fixture();
    populate(&mut f);
    let target = MirrorTarget::resolve(&f.workspace, std::path::Path::new("MEMORY.md")).unwrap();
    let first = export(&f.store, &target).unwrap();
    assert!(!first.brought_up_to_date, "nothing was published before");
    let file = || std::fs::read_to_string(&target.path).unwrap();
    let (ws, scope) = (f.workspace.id.clone(), Scope::Workspace(f.workspace.id.clone()));
    // Writes through another handle, in this workspace and in another.
    let mut other = Store::open(&f.store_path).unwrap();
    let ids = other
        .write(|w| {
            let a = w.create(
                &ws,
                note(Kind::Gotcha, Priority::High, "a new gotcha", "two\n\nparagraphs"),
                Actor::Agent,
                Timestamp(AUG_1),
            )?;
            w.create("elsewhere", note(Kind::Gotcha, Priority::High, "not here", ""), Actor::Agent, Timestamp(AUG_1))?;
            w.append(&scope, 1, event(EventKind::StaleFlagged, 12, Some("moved")))?;
            Ok(a)
        })
        .unwrap();
    other
        .write(|w| {
            w.supersede(
                &scope,
                ids,
                note(Kind::Finding, Priority::Low, "its successor", ""),
                Actor::Human,
                Timestamp(AUG_1 + DAY),
                None,
            )
        })
        .unwrap();
    let second = export(&f.store, &target).unwrap();
    assert!(second.written);
    assert_eq!(second.brought_up_to_date, !backend::on_postgres(), "a replica's rendering is always whole");
    assert_eq!(file(), mirror_text(&f));

    // A person's edit of the same length, then a file of another length:
    // neither is read back, and the export puts the true rendering back.
    for edit in [file().replacen("a new gotcha", "a NEW gotcha", 1), file() + "\n"] {
        std::fs::set_permissions(&target.path, std::fs::Permissions::from_mode(0o644)).unwrap();
        std::fs::write(&target.path, edit).unwrap();
        other
            .write(|w| w.create(&ws, note(Kind::Task, Priority::Low, "a task", ""), Actor::Agent, Timestamp(AUG_1)))
            .unwrap();
        let after = export(&f.store, &target).unwrap();
        assert!(after.written && !after.brought_up_to_date, "an edited file is not trusted");
        assert_eq!(file(), mirror_text(&f));
    }

    // A forget leaves no trace in the log: rendered whole.
    other.write(|w| w.forget(&scope, ids)).unwrap();
    let forgotten = export(&f.store, &target).unwrap();
    assert!(forgotten.written && !forgotten.brought_up_to_date);
    assert_eq!(file(), mirror_text(&f));
    assert!(!file().contains("a new gotcha"));
}

#[test]
fn another_workspaces_writes_leave_a_mirror_as_it_is() {
    let mut f = fixture();
    let target = MirrorTarget::resolve(&f.workspace, std::path::Path::new("MEMORY.md")).unwrap();
    populate(&mut f);
    export(&f.store, &target).unwrap();
    let published = std::fs::read(&target.path).unwrap();
    // Writes to another workspace of the store: this mirror shows the store still.
    let other = |f: &mut Fixture, title: &str| {
        f.store
            .write(|w| {
                w.create("/elsewhere", note(Kind::Finding, Priority::Low, title, ""), Actor::Agent, Timestamp(AUG_1))
            })
            .unwrap();
    };
    other(&mut f, "written elsewhere");
    assert!(!is_behind(&f.store, &target).unwrap(), "another workspace's write");
    assert_eq!(keep_current(&f.store, &target).unwrap(), None, "nothing rendered");
    assert_eq!(std::fs::read(&target.path).unwrap(), published);
    // The file changed by hand (another length, or the same length: a
    // branch checked out over it), or a write to this workspace: behind.
    std::fs::set_permissions(&target.path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&target.path, b"edited by hand").unwrap();
    assert!(is_behind(&f.store, &target).unwrap(), "a file not what was published");
    export(&f.store, &target).unwrap();
    other(&mut f, "written elsewhere once more");
    let mut same_length = std::fs::read(&target.path).unwrap();
    let at = same_length.iter().rposition(|&b| b == b'a').unwrap();
    same_length[at] = b'b';
    std::fs::set_permissions(&target.path, std::fs::Permissions::from_mode(0o644)).unwrap();
    std::fs::write(&target.path, &same_length).unwrap();
    assert!(is_behind(&f.store, &target).unwrap(), "a file of the same length, not what was published");
    export(&f.store, &target).unwrap();
    other(&mut f, "written elsewhere again");
    assert!(!is_behind(&f.store, &target).unwrap());
    let ws = f.workspace.id.clone();
    f.store
        .write(|w| {
            w.create(&ws, note(Kind::Finding, Priority::Low, "written here", ""), Actor::Agent, Timestamp(AUG_1))
        })
        .unwrap();
    assert!(is_behind(&f.store, &target).unwrap(), "this workspace's write");
    // A note of this workspace forgotten (no event left of it): behind too.
    export(&f.store, &target).unwrap();
    let id = f.store.notes(&Scope::Workspace(ws.clone())).unwrap()[0].note.id;
    f.store.write(|w| w.forget(&Scope::Workspace(ws.clone()), id)).unwrap();
    assert!(is_behind(&f.store, &target).unwrap(), "a forget");
}

#[test]
fn a_writer_that_finds_another_rendering_leaves_its_write_to_it_without_waiting() {
    if backend::on_postgres() {
        return; // the turn file sits beside a store file
    }
    let mut f = fixture();
    let target = MirrorTarget::resolve(&f.workspace, std::path::Path::new("MEMORY.md")).unwrap();
    assert!(keep_current(&f.store, &target).unwrap().is_some(), "behind: rendered");
    assert!(keep_current(&f.store, &target).unwrap().is_none(), "current: nothing to do");
    // Another process holds this mirror's turn (it is rendering).
    let turn_file = std::fs::read_dir(f.store_path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .find(|p| p.to_string_lossy().contains("memory.db-mirror-") && p.to_string_lossy().ends_with(".lock"))
        .expect("the render turn's file beside the store");
    let turn = std::fs::File::open(turn_file).unwrap();
    turn.lock().unwrap();
    populate(&mut f);
    let started = std::time::Instant::now();
    assert!(keep_current(&f.store, &target).unwrap().is_none(), "left to the process rendering");
    assert!(started.elapsed() < Duration::from_secs(1), "did not wait: {:?}", started.elapsed());
    assert!(is_behind(&f.store, &target).unwrap());
    drop(turn);
    // The holder looks again when done; here, the next upkeep renders.
    assert!(keep_current(&f.store, &target).unwrap().is_some());
    assert_eq!(std::fs::read_to_string(&target.path).unwrap(), mirror_text(&f));
}

#[test]
fn an_overtaken_render_never_replaces_the_newer_mirror_nor_comes_back_after_a_delete() {
    let mut f = fixture();
    let target = MirrorTarget::resolve(&f.workspace, std::path::Path::new("MEMORY.md")).unwrap();
    // A slow process rendered the empty store (epoch 0) ...
    let old = render_workspace(&f.store, &f.workspace, DocumentKind::Mirror).unwrap();
    // ... while another wrote and exported epoch 1.
    populate(&mut f);
    export(&f.store, &target).unwrap();
    let newer = mirror_text(&f);
    assert_eq!(std::fs::read_to_string(&target.path).unwrap(), newer);

    let late = publish(&f.store, &target, &old).unwrap();
    assert!(!late.written);
    assert_eq!(std::fs::read_to_string(&target.path).unwrap(), newer, "the newer text stands");
    assert!(!is_behind(&f.store, &target).unwrap());

    std::fs::remove_file(&target.path).unwrap();
    let late = publish(&f.store, &target, &old).unwrap();
    assert!(!late.written && !target.path.exists(), "an overtaken render is not put back after a delete");
    assert!(is_behind(&f.store, &target).unwrap(), "the missing file is behind, so the next process renders it");
    assert!(export(&f.store, &target).unwrap().written);
    assert_eq!(std::fs::read_to_string(&target.path).unwrap(), newer);
    let temps = std::fs::read_dir(target.path.parent().unwrap())
        .unwrap()
        .filter(|e| e.as_ref().unwrap().file_name().to_string_lossy().ends_with(".tmp"))
        .count();
    assert_eq!(temps, 0, "the overtaken renders' staged files are removed");
}

#[test]
fn mirror_paths_must_stay_inside_the_workspace() {
    let f = fixture();
    let root = f.workspace.root.clone().unwrap();
    let outside = tempfile::tempdir().unwrap();
    std::os::unix::fs::symlink(outside.path(), root.join("escape")).unwrap();
    std::os::unix::fs::symlink(outside.path().join("M.md"), root.join("link.md")).unwrap();
    let resolve = |p: &str| MirrorTarget::resolve(&f.workspace, std::path::Path::new(p)).unwrap_err();
    assert!(matches!(resolve("../MEMORY.md"), MirrorError::OutsideWorkspace { .. }));
    assert!(matches!(resolve("/tmp/MEMORY.md"), MirrorError::OutsideWorkspace { .. }));
    assert!(matches!(resolve("escape/MEMORY.md"), MirrorError::OutsideWorkspace { .. }));
    assert!(matches!(resolve("nodir/MEMORY.md"), MirrorError::MissingDirectory { .. }));
    assert!(resolve("link.md").to_string().contains("symbolic link"));
    assert!(resolve("server").to_string().contains("is a directory"));
    std::fs::write(root.join("README.md"), "# my project\n").unwrap();
    assert!(resolve("README.md").to_string().contains("is not a mnemo mirror"), "only a mirror is ever overwritten");
    let opaque = Workspace::named("larder");
    assert!(matches!(
        MirrorTarget::resolve(&opaque, std::path::Path::new("MEMORY.md")),
        Err(MirrorError::NoWorkspaceDirectory(_))
    ));
    assert_eq!(MirrorTarget::resolve(&f.workspace, &root.join("server/M.md")).unwrap().relative, "server/M.md");
}

fn wait_for(events: &mpsc::Receiver<MirrorEvent>, want: impl Fn(&MirrorEvent) -> bool) -> MirrorEvent {
    loop {
        let event =
            events.recv_timeout(Duration::from_secs(10)).expect("the mirror worker reported nothing within 10 s");
        if want(&event) {
            return event;
        }
    }
}

#[test]
fn a_burst_of_writes_in_this_process_renders_once_with_the_final_epoch() {
    let mut f = fixture();
    let target = MirrorTarget::resolve(&f.workspace, std::path::Path::new("MEMORY.md")).unwrap();
    let (sender, events) = mpsc::channel();
    let sync =
        MirrorSync::start(&f.store_path, target.clone(), Duration::from_millis(300), move |e| sender.send(e).unwrap());
    assert_eq!(
        wait_for(&events, |_| true),
        MirrorEvent::Rendered { epoch: 0, written: true },
        "renders at start when behind"
    );
    f.store.on_commit(sync.commit_listener());
    let ws = f.workspace.id.clone();
    for i in 0..5 {
        f.store
            .write(|w| {
                w.create(
                    &ws,
                    note(Kind::Finding, Priority::Low, &format!("finding {i}"), ""),
                    Actor::Agent,
                    Timestamp(AUG_1),
                )
            })
            .unwrap();
    }
    assert_eq!(
        wait_for(&events, |_| true),
        MirrorEvent::Rendered { epoch: 5, written: true },
        "one render, after the burst"
    );
    assert!(std::fs::read_to_string(&target.path).unwrap().contains("finding 4"));
    drop(sync);
    assert!(events.try_recv().is_err(), "nothing pending at shutdown");
}

#[test]
fn another_processs_write_is_noticed_through_the_store_file() {
    let f = fixture();
    let target = MirrorTarget::resolve(&f.workspace, std::path::Path::new("MEMORY.md")).unwrap();
    let (sender, events) = mpsc::channel();
    let _sync =
        MirrorSync::start(&f.store_path, target.clone(), Duration::from_millis(100), move |e| sender.send(e).unwrap());
    wait_for(&events, |_| true);
    let mut other = Store::open(&f.store_path).unwrap();
    let ws = f.workspace.id.clone();
    other
        .write(|w| {
            w.create(&ws, note(Kind::Gotcha, Priority::High, "written elsewhere", ""), Actor::Agent, Timestamp(AUG_1))
        })
        .unwrap();
    wait_for(&events, |e| *e == MirrorEvent::Rendered { epoch: 1, written: true });
    assert!(std::fs::read_to_string(&target.path).unwrap().contains("written elsewhere"));
}

#[test]
fn a_failed_render_is_reported_and_retried_on_the_next_write() {
    let mut f = fixture();
    let root = f.workspace.root.clone().unwrap();
    std::fs::create_dir(root.join("docs")).unwrap();
    let target = MirrorTarget::resolve(&f.workspace, std::path::Path::new("docs/MEMORY.md")).unwrap();
    std::fs::remove_dir(root.join("docs")).unwrap();
    let (sender, events) = mpsc::channel();
    let sync =
        MirrorSync::start(&f.store_path, target.clone(), Duration::from_millis(50), move |e| sender.send(e).unwrap());
    f.store.on_commit(sync.commit_listener());
    assert!(matches!(wait_for(&events, |_| true), MirrorEvent::Failed(message) if message.contains("docs/MEMORY.md")));
    std::fs::create_dir(root.join("docs")).unwrap();
    let ws = f.workspace.id.clone();
    f.store
        .write(|w| w.create(&ws, note(Kind::Task, Priority::Low, "retry me", ""), Actor::Agent, Timestamp(AUG_1)))
        .unwrap();
    wait_for(&events, |e| matches!(e, MirrorEvent::Rendered { epoch: 1, .. }));
    assert!(std::fs::read_to_string(&target.path).unwrap().contains("retry me"));
}

/// Whether a process stands for a mirror of `f`'s store (a standing file is locked).
fn someone_stands(f: &Fixture) -> bool {
    std::fs::read_dir(f.store_path.parent().unwrap())
        .unwrap()
        .map(|e| e.unwrap().path())
        .any(|p| p.to_string_lossy().ends_with(".standing") && std::fs::File::open(&p).unwrap().try_lock().is_err())
}

fn eventually(what: &str, holds: impl Fn() -> bool) {
    let started = std::time::Instant::now();
    while !holds() {
        assert!(started.elapsed() < Duration::from_secs(10), "not within 10 s: {what}");
        std::thread::sleep(Duration::from_millis(10));
    }
}

#[test]
fn a_standing_process_renders_every_writers_writes_and_catches_up_when_it_stops() {
    if backend::on_postgres() {
        return; // the standing file sits beside a store file
    }
    let f = fixture();
    let root = f.workspace.root.clone().unwrap();
    std::fs::create_dir_all(root.join(".mnemo")).unwrap();
    std::fs::write(root.join(".mnemo/config.toml"), "[memory_export]\nenabled = true\n").unwrap();
    let target = MirrorTarget::resolve(&f.workspace, std::path::Path::new("MEMORY.md")).unwrap();
    let (sender, events) = mpsc::channel();
    let first = MirrorSync::stand(&f.store_path, f.workspace.clone(), move |e| sender.send(e).unwrap());
    eventually("the worker stands", || someone_stands(&f));
    let file = || std::fs::read_to_string(&target.path).unwrap_or_default();

    // Writers (another connection, as another process would be) leave every render to it.
    let mut writer = Store::open(&f.store_path).unwrap();
    let ws = f.workspace.id.clone();
    let write = |writer: &mut Store, title: &str| {
        writer
            .write(|w| w.create(&ws, note(Kind::Finding, Priority::Low, title, ""), Actor::Agent, Timestamp(AUG_1)))
            .unwrap();
        let started = std::time::Instant::now();
        assert!(keep_current(writer, &target).unwrap().is_none(), "left to the process standing");
        assert!(started.elapsed() < Duration::from_secs(1), "the writer did not wait: {:?}", started.elapsed());
    };
    for i in 0..20 {
        write(&mut writer, &format!("burst {i}"));
    }
    eventually("the standing worker rendered the burst", || file().contains("burst 19"));
    assert_eq!(file(), mirror_text(&f));
    assert!(matches!(wait_for(&events, |_| true), MirrorEvent::Rendered { written: true, .. }));

    // Stopped right after a write it was left (within its pace, so before it
    // rendered it, most of the time): the write is rendered before it is gone.
    write(&mut writer, "left at the last moment");
    drop(first);
    assert!(file().contains("left at the last moment"), "caught up as it stopped");
    assert!(!is_behind(&f.store, &target).unwrap() && !someone_stands(&f));

    // Another worker stands once it starts.
    let second = MirrorSync::stand(&f.store_path, f.workspace.clone(), |_| {});
    eventually("the second worker stands", || someone_stands(&f));
    write(&mut writer, "for the second");
    eventually("the second worker rendered", || file().contains("for the second"));

    // The mirror turned off: it stops standing (at its next look), and writers no longer leave renders to it.
    std::fs::write(root.join(".mnemo/config.toml"), "[memory_export]\nenabled = false\n").unwrap();
    writer
        .write(|w| w.create(&ws, note(Kind::Finding, Priority::Low, "after off", ""), Actor::Agent, Timestamp(AUG_1)))
        .unwrap();
    eventually("the second worker stopped standing", || !someone_stands(&f));
    drop(second);
    assert!(!file().contains("after off"), "a mirror turned off is left as it is");
    assert!(keep_current(&writer, &target).unwrap().is_some(), "with no one standing, a writer renders");

    // Turned on again while a worker runs: it stands for it.
    std::fs::write(root.join(".mnemo/config.toml"), "[memory_export]\nenabled = true\n").unwrap();
    let _third = MirrorSync::stand(&f.store_path, f.workspace.clone(), |_| {});
    eventually("a worker stands for a mirror turned on", || someone_stands(&f));
}
