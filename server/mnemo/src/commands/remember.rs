//! `mnemo remember` on the command line: the arguments into
//! `crate::app::remember`, the id out.

use std::process::ExitCode;

use mnemo_core::{NewNote, Provenance};
use serde_json::json;

use crate::app::remember::{Links, bind_provenance, capture_anchors, create_linked_note};
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
    let message = args.user_message.clone().or_else(|| crate::app::session::latest_user_message(ctx));
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
    let state = store.note(&ctx.scope(false), id)?.state.status;
    if ctx.json {
        let state = state.name();
        print_json(&json!({ "id": id, "provenance": provenance, "contradicts": args.contradicts, "state": state }));
    } else {
        println!("#{id}");
    }
    if args.kind == mnemo_core::Kind::Directive
        && let Some(warning) = crate::app::remember::directives_over_budget(ctx, &store)?
    {
        eprintln!("warning: {warning}");
    }
    if state == mnemo_core::Status::Proposed {
        crate::app::remember::say_proposed(id);
    }
    Ok(ExitCode::SUCCESS)
}
