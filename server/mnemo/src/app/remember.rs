//! Writing a note as every entry point does (CLI `remember`, `supersede`,
//! MCP `remember`, imports): anchors captured inside the workspace, the
//! user's words bound as the quote when the note states them (provenance
//! from evidence, never by request), vectors when a model is loaded, links
//! to the notes it replaces or proves wrong — one transaction.

use anyhow::anyhow;
use mnemo_core::quote::find_user_quote;
use mnemo_core::review::ProposedLink;
use mnemo_core::{Anchor, EventData, EventKind, NewNote, NoteId, Provenance};

use crate::context::Context;
use crate::semantic::Semantic;

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
    let proposes = ctx.review().proposes(actor, note.kind);
    ctx.write(store, |w| {
        if links.allow_secrets {
            w.allow_secrets();
        }
        let id = if proposes {
            let link = match (links.supersedes, links.contradicts) {
                (Some(old), _) => Some(ProposedLink::Supersedes(old)),
                (None, Some(wrong)) => Some(ProposedLink::Contradicts(wrong)),
                (None, None) => None,
            };
            w.propose(&scope, &ctx.workspace.id, note, actor, ctx.now, link)?
        } else {
            match links.supersedes {
                None => w.create(&ctx.workspace.id, note, actor, ctx.now)?,
                Some(old) => w.supersede(&scope, old, note, actor, ctx.now, None)?,
            }
        };
        if let Some((vectors, model)) = &vectors {
            w.put_vectors(id, &ctx.workspace.id, vectors, model)?;
        }
        if let (Some(wrong), false) = (links.contradicts, proposes) {
            let reason = Some(format!("contradicted by #{id}"));
            w.append(&scope, wrong, EventData { kind: EventKind::Revoked, actor, at: ctx.now, reason })?;
        }
        Ok(id)
    })
}

/// What a person or agent at the terminal is told when their note became a proposal.
pub fn say_proposed(id: NoteId) {
    eprintln!(
        "#{id} is proposed: this workspace reviews what agents write ([review] in .mnemo/config.toml); agents are not told it until a person accepts it (`mnemo review`)"
    );
}

/// Said when a write leaves the standing directives (and the kinds a
/// session start delivers whole) larger than what the session-start hook
/// delivers whole at its default budget: their bodies will be cut there
/// (each cut says so), so the person should know now.
pub fn directives_over_budget(ctx: &Context, store: &mnemo_store::Store) -> anyhow::Result<Option<String>> {
    use mnemo_core::delivery::{DEFAULT_HOOK_TOKENS, at_start, cut_at_start};
    use mnemo_core::triggers::Moment;
    let triggers = ctx.config().map(|c| c.triggers.clone()).unwrap_or_default();
    let whole = store.active_notes_of(&ctx.scope(false), &triggers.kinds_at(Moment::SessionStart))?;
    let selection = at_start(&whole, &triggers, Moment::SessionStart);
    let cut = cut_at_start(&selection, ctx.now, DEFAULT_HOOK_TOKENS);
    Ok(mnemo_core::load_budget::describe_start_cut(&cut, DEFAULT_HOOK_TOKENS))
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
