//! `mnemo remember`: capture a note, binding the user's words as its quote
//! when the note states them (provenance from evidence, never by request).

use std::process::ExitCode;

use anyhow::anyhow;
use mnemo_core::quote::find_user_quote;
use mnemo_core::{Anchor, EventData, EventKind, NewNote, NoteId, Provenance};
use serde_json::json;

use crate::cli::{Remember, RequestedProvenance};
use crate::context::Context;
use crate::output::print_json;
use crate::semantic::Semantic;

pub fn run(ctx: &Context, args: Remember) -> anyhow::Result<ExitCode> {
    let actor = Context::actor(args.person.as_human);
    let requested = match (args.person.as_human, args.provenance) {
        (true, _) => Provenance::Human,
        (false, RequestedProvenance::Auto) => Provenance::Auto,
        (false, RequestedProvenance::Agent) => Provenance::Agent,
    };
    let anchors = capture_anchors(ctx, &args.anchors)?;
    // The user's message: given, else the one the user-prompt hook kept for the session.
    let message = args.user_message.clone().or_else(|| crate::commands::session::latest_user_message(ctx));
    let (provenance, quote) = bind_provenance(requested, &args.title, &args.body, message.as_deref());
    let note = NewNote {
        kind: args.kind,
        priority: args.priority,
        title: args.title,
        body: args.body,
        provenance,
        quote,
        anchors,
    };
    let mut store = ctx.open()?;
    if args.allow_secret && !args.person.as_human {
        anyhow::bail!("--allow-secret is a person's decision: pass --as-human with it (an agent cannot store secrets)");
    }
    let links = Links { supersedes: None, contradicts: args.contradicts, allow_secrets: args.allow_secret };
    let id = create_linked_note(ctx, &mut store, &mut Semantic::load(ctx), note, actor, links)?;
    if ctx.json {
        print_json(&json!({ "id": id, "provenance": provenance, "contradicts": args.contradicts }));
    } else {
        println!("#{id}");
    }
    Ok(ExitCode::SUCCESS)
}

/// Write a new note with its vectors (when a model is loaded), through the one write path.
pub fn create_note(
    ctx: &Context,
    store: &mut mnemo_store::Store,
    semantic: &mut Semantic,
    note: NewNote,
    actor: mnemo_core::Actor,
) -> anyhow::Result<mnemo_core::NoteId> {
    create_linked_note(ctx, store, semantic, note, actor, Links::default())
}

/// Notes a new note replaces or proves wrong.
#[derive(Debug, Default, Clone, Copy)]
pub struct Links {
    /// Superseded by the new note (it states the corrected fact).
    pub supersedes: Option<NoteId>,
    /// Revoked, "contradicted by #new" (it was wrong).
    pub contradicts: Option<NoteId>,
    /// A person's `--allow-secret`: the note may hold what looks like a secret.
    pub allow_secrets: bool,
}

/// Write a new note with its vectors and its links, in one transaction: a
/// refused link (an unknown id, a note already revoked) writes nothing.
pub fn create_linked_note(
    ctx: &Context,
    store: &mut mnemo_store::Store,
    semantic: &mut Semantic,
    note: NewNote,
    actor: mnemo_core::Actor,
    links: Links,
) -> anyhow::Result<NoteId> {
    if links.supersedes.is_some() && links.supersedes == links.contradicts {
        anyhow::bail!(
            "a note cannot both supersede and contradict #{}; choose one",
            links.supersedes.unwrap_or_default()
        );
    }
    let vectors = semantic.vectors_for_new_note(store, &note.title, &note.body);
    let scope = ctx.scope(false);
    ctx.write(store, |w| {
        if links.allow_secrets {
            w.allow_secrets();
        }
        let id = match links.supersedes {
            None => w.create(&ctx.workspace.id, note, actor, ctx.now)?,
            Some(old) => w.supersede(&scope, old, note, actor, ctx.now, None)?,
        };
        if let Some((vectors, model)) = &vectors {
            w.put_vectors(id, &ctx.workspace.id, vectors, model)?;
        }
        if let Some(wrong) = links.contradicts {
            let reason = Some(format!("contradicted by #{id}"));
            w.append(&scope, wrong, EventData { kind: EventKind::Revoked, actor, at: ctx.now, reason })?;
        }
        Ok(id)
    })
}

/// `user-stated` with the bound quote when the user's message states the note;
/// otherwise the requested class.
pub fn bind_provenance(
    requested: Provenance,
    title: &str,
    body: &str,
    user_message: Option<&str>,
) -> (Provenance, Option<String>) {
    if requested == Provenance::Human {
        return (requested, None);
    }
    match user_message.and_then(|message| find_user_quote(title, body, message)) {
        Some(quote) => (Provenance::UserStated, Some(quote)),
        None => (requested, None),
    }
}

/// Resolve `PATH:START-END` anchors inside the workspace directory.
pub fn capture_anchors(ctx: &Context, specs: &[String]) -> anyhow::Result<Vec<Anchor>> {
    if specs.is_empty() {
        return Ok(Vec::new());
    }
    let root = ctx
        .workspace
        .root
        .as_deref()
        .ok_or_else(|| anyhow!(mnemo_store::anchor::AnchorError::NoWorkspaceDirectory(ctx.workspace.id.clone())))?;
    specs.iter().map(|spec| Ok(mnemo_store::anchor::capture(root, spec)?)).collect()
}
