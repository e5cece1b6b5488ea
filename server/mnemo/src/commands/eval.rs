//! `mnemo eval`: the miss-rate harness. Runs labelled queries (the schema of
//! eval/queries.jsonl) against a store — a fresh temporary one loaded from
//! `--corpus` (or an empty PostgreSQL database, `--into`), or the current
//! one — in hybrid, lexical-only and vector-only
//! modes, and reports recall@k, hit@k, MRR, misses by stage, silent stale
//! misses, cross-workspace leaks and abstention (with the sweep of similarity
//! floors the default was chosen from).

use std::collections::{HashMap, HashSet};
use std::io::BufRead;
use std::process::ExitCode;

use anyhow::{Context as _, anyhow, bail};
use mnemo_core::recall::eval::{EvalReport, QueryCase, QueryOutcome, evaluate};
use mnemo_core::recall::token_signs::QueryTokens;
use mnemo_core::recall::{RankingMode, RecallRequest};
use mnemo_core::{Actor, NoteId, Status};
use mnemo_store::{Scope, Store, import_jsonl};
use serde_json::{Value, json};

use crate::cli::Eval;
use crate::context::Context;
use crate::output::print_json;
use crate::semantic::Semantic;

struct Query {
    qid: String,
    text: String,
    workspace: String,
    category: String,
    relevant: Vec<i64>,
}

fn read_queries(path: &std::path::Path) -> anyhow::Result<Vec<Query>> {
    let file = std::fs::File::open(path).with_context(|| format!("cannot open {}; check the path", path.display()))?;
    let mut queries = Vec::new();
    for (index, line) in std::io::BufReader::new(file).lines().enumerate() {
        let line = line?;
        if line.trim().is_empty() {
            continue;
        }
        let bad = |what: &str| anyhow!("{} line {}: {what}", path.display(), index + 1);
        let v: Value = serde_json::from_str(&line).map_err(|e| bad(&format!("not JSON: {e}")))?;
        let text = |key: &str| v[key].as_str().map(str::to_string).ok_or_else(|| bad(&format!("`{key}` is missing")));
        let relevant = v["relevant"].as_array().ok_or_else(|| bad("`relevant` is not a list"))?;
        queries.push(Query {
            qid: text("qid")?,
            text: text("query")?,
            workspace: text("workspace")?,
            category: text("category")?,
            relevant: relevant
                .iter()
                .map(|id| id.as_i64().ok_or_else(|| bad("`relevant` holds a non-integer")))
                .collect::<Result<_, _>>()?,
        });
    }
    Ok(queries)
}

pub fn run(ctx: &Context, args: Eval) -> anyhow::Result<ExitCode> {
    let queries = read_queries(&args.queries)?;
    // Many recalls in one process, as in a language server or an MCP server;
    // every search from the kept vectors, whatever the corpus's size, so
    // the harness holds that search to the same quality.
    mnemo_store::vector_cache::keep_vectors_from(0);
    if !args.models.is_empty() {
        return compare_models(ctx, &args, &queries);
    }
    let (ranking, reports) = evaluate_with(ctx, &args, &queries, Semantic::load_here(ctx))?;
    if ctx.json {
        print_json(&reports_json(&ranking, &reports)?);
    } else {
        print_text(&ranking, &reports);
    }
    Ok(ExitCode::SUCCESS)
}

/// `--model A --model B`: the same corpus and queries with each model, one
/// row each. Every model must load and embed: a comparison never falls
/// back to lexical-only silently.
fn compare_models(ctx: &Context, args: &Eval, queries: &[Query]) -> anyhow::Result<ExitCode> {
    if args.corpus.is_none() {
        bail!("--model compares models on a corpus embedded by each: pass --corpus FILE too");
    }
    if args.into.is_some() {
        bail!(
            "--into loads one corpus into one database; compare models without --into (each into its own temporary file)"
        );
    }
    // Every model loads before any is evaluated: a typo fails at once, not after the first run.
    let mut loaded = Vec::new();
    for (index, dir) in args.models.iter().enumerate() {
        if !dir.exists() {
            bail!(
                "--model {}: no such directory; pass a model directory (scripts/install-model DIR makes one)",
                dir.display()
            );
        }
        if !dir.is_dir() {
            bail!("--model {}: not a directory; pass the model's directory, not a file in it", dir.display());
        }
        let same = |other: &std::path::PathBuf| std::fs::canonicalize(other).ok() == std::fs::canonicalize(dir).ok();
        if args.models[..index].iter().any(same) {
            bail!("--model {} is given twice; compare two different model directories", dir.display());
        }
        let mut semantic = Semantic::load_from(ctx.config().map_err(|e| e.to_string()), Some(dir));
        let identity = match semantic.embedder() {
            Some(embedder) => embedder.identity().to_string(),
            None => {
                let (_, reason) = semantic.ranking(&ctx.open()?);
                bail!("cannot evaluate the model in {}: {}", dir.display(), reason.unwrap_or_default());
            }
        };
        loaded.push((dir, identity, semantic));
    }
    let mut rows = Vec::new();
    for (dir, identity, semantic) in loaded {
        eprintln!("evaluating {identity} ({})", dir.display());
        let (ranking, reports) = evaluate_with(ctx, args, queries, semantic)?;
        rows.push((dir.clone(), identity, ranking, reports));
    }
    if ctx.json {
        let models = rows
            .iter()
            .map(|(dir, identity, ranking, reports)| {
                let mut body = reports_json(ranking, reports)?;
                body["model"] = json!(identity);
                body["model_dir"] = json!(dir.display().to_string());
                Ok(body)
            })
            .collect::<anyhow::Result<Vec<Value>>>()?;
        print_json(&json!({ "models": models }));
        return Ok(ExitCode::SUCCESS);
    }
    let (_, _, ranking, first) = &rows[0];
    println!("ranking: {ranking}");
    println!("{} queries, {} answerable; k = {}", first[0].1.queries, first[0].1.answerable, first[0].1.k);
    let categories: Vec<&String> = first[0].1.by_category.keys().collect();
    println!(
        "\n| model | recall@k | hit@k | MRR | {} | negative abstained | answerable wrongly abstained | silent stale misses | leaks |",
        categories.iter().map(|c| format!("{c} recall@k")).collect::<Vec<_>>().join(" | ")
    );
    println!("|---|---:|---:|---:|{}---:|---:|---:|---:|", "---:|".repeat(categories.len()));
    for (dir, identity, _, reports) in &rows {
        let r = &reports[0].1;
        let cells: Vec<String> = categories
            .iter()
            .map(|c| r.by_category.get(*c).map_or("-".to_string(), |x| format!("{:.3}", x.recall_at_k)))
            .collect();
        println!(
            "| {identity} ({}) | {:.3} | {:.3} | {:.3} | {} | {} of {} | {} of {} | {} | {} |",
            dir.display(),
            r.recall_at_k,
            r.hit_at_k,
            r.mrr,
            cells.join(" | "),
            r.abstention.negative.1,
            r.abstention.negative.0,
            r.abstention.answerable.1,
            r.abstention.answerable.0,
            r.silent_stale_misses.len(),
            r.cross_workspace_leaks.len()
        );
    }
    Ok(ExitCode::SUCCESS)
}

fn reports_json(ranking: &str, reports: &[(RankingMode, EvalReport)]) -> anyhow::Result<Value> {
    let mut body = serde_json::to_value(&reports[0].1)?;
    body["ranking"] = json!(ranking);
    for (mode, report) in &reports[1..] {
        let key = if *mode == RankingMode::LexicalOnly { "lexical_only" } else { "vector_only" };
        body[key] = serde_json::to_value(report)?;
    }
    Ok(body)
}

/// The harness with `semantic`'s model: the ranking that ran, and a report
/// per mode (hybrid, lexical only, vector only; lexical only without a model).
fn evaluate_with(
    ctx: &Context,
    args: &Eval,
    queries: &[Query],
    mut semantic: Semantic,
) -> anyhow::Result<(String, Vec<(RankingMode, EvalReport)>)> {
    let temp = tempfile_dir()?;
    let (store, ids) = match &args.corpus {
        Some(corpus) => load_corpus(corpus, args.into.as_deref(), &temp, &mut semantic, ctx)?,
        None => (ctx.open()?, None),
    };
    if let Some(ids) = &ids {
        for query in queries {
            if let Some(unknown) = query.relevant.iter().find(|id| !ids.contains_key(id)) {
                bail!(
                    "query {} names note {unknown}, which is not in the corpus; fix the queries or the corpus",
                    query.qid
                );
            }
        }
    }
    let map =
        |id: i64| -> NoteId { ids.as_ref().and_then(|m: &HashMap<i64, NoteId>| m.get(&id).copied()).unwrap_or(id) };
    let (mode, reason) = semantic.ranking(&store);
    let texts: Vec<&str> = queries.iter().map(|q| q.text.as_str()).collect();
    let vectors: Option<Vec<Vec<f32>>> = match mode {
        RankingMode::LexicalOnly => None,
        _ => semantic
            .embedder()
            .map(|e| e.embed(&texts))
            .transpose()
            .map_err(|e| anyhow!("embedding the queries: {e}"))?,
    };
    // The queries' token vectors for late interaction, against the notes' stored token signs.
    let query_tokens: Vec<Option<QueryTokens>> = if vectors.is_some() && args.rerank > 0 {
        queries.iter().map(|query| semantic.query_tokens(&query.text)).collect()
    } else {
        queries.iter().map(|_| None).collect()
    };
    let fusion = args.fusion.unwrap_or_default();
    let modes: Vec<RankingMode> = if vectors.is_some() {
        vec![RankingMode::Hybrid, RankingMode::LexicalOnly, RankingMode::VectorOnly]
    } else {
        vec![RankingMode::LexicalOnly]
    };
    let mut reports: Vec<(RankingMode, EvalReport)> = Vec::new();
    for mode in modes {
        let mut runs = Vec::with_capacity(queries.len());
        for (index, query) in queries.iter().enumerate() {
            let mut request = RecallRequest::new(query.workspace.clone(), args.k.max(20));
            request.mode = mode;
            request.fusion = fusion;
            let vector = vectors.as_ref().map(|v| v[index].as_slice());
            let late = query_tokens[index].as_ref();
            let outcome = store.recall_reranked(&query.text, vector, &request, args.pool, args.rerank, late)?;
            let relevant: Vec<NoteId> = query.relevant.iter().map(|id| map(*id)).collect();
            let workspace_of: HashMap<NoteId, &str> =
                outcome.candidates.iter().map(|c| (c.id, c.workspace.as_str())).collect();
            let results: Vec<NoteId> = outcome.answer.results.iter().map(|r| r.id).collect();
            let filtered: HashSet<NoteId> = relevant
                .iter()
                .copied()
                .filter(|id| store.note(&Scope::All, *id).map(|v| v.state.status != Status::Active).unwrap_or(true))
                .collect();
            runs.push((
                QueryCase { qid: query.qid.clone(), category: query.category.clone(), relevant },
                QueryOutcome {
                    leaked: results
                        .iter()
                        .copied()
                        .filter(|id| workspace_of.get(id).is_some_and(|w| *w != query.workspace))
                        .collect(),
                    results,
                    candidates: outcome.candidates.iter().map(|c| c.id).collect(),
                    filtered,
                    hidden_stale: outcome.answer.hidden_stale.clone(),
                    abstained: outcome.answer.abstention.is_some(),
                    best_similarity: outcome.answer.best_similarity,
                },
            ));
        }
        reports.push((mode, evaluate(&runs, args.k)));
    }
    let primary_mode = reports[0].0;
    let rerank = if primary_mode == RankingMode::Hybrid { args.rerank } else { 0 };
    let ranking = mnemo_core::recall::describe_ranking(primary_mode, reason.as_deref(), rerank, Some(fusion));
    Ok((ranking, reports))
}

fn tempfile_dir() -> anyhow::Result<TempDir> {
    let base = std::env::temp_dir().join(format!("mnemo-eval-{}", std::process::id()));
    std::fs::create_dir_all(&base).with_context(|| format!("cannot create {}", base.display()))?;
    Ok(TempDir(base))
}

/// A directory removed when dropped.
struct TempDir(std::path::PathBuf);

impl Drop for TempDir {
    fn drop(&mut self) {
        let _ = std::fs::remove_dir_all(&self.0);
    }
}

/// The store at `url` for `--into`: a PostgreSQL database with no notes yet
/// (the corpus's ids must be its own; a team's store is never mixed with it).
fn empty_database(url: &str) -> anyhow::Result<Store> {
    if !mnemo_store::postgres::is_postgres(url) {
        bail!(
            "--into {url}: not a postgres:// URL; give an empty PostgreSQL database (without --into the corpus goes to a temporary file)"
        );
    }
    let store = Store::open(std::path::Path::new(url))?;
    let notes = store.stats(&Scope::All)?.notes;
    if notes > 0 {
        bail!(
            "--into {}: the database holds {notes} notes already; give an empty database (createdb a new one), the corpus is loaded into it",
            store.location()
        );
    }
    Ok(store)
}

fn load_corpus(
    corpus: &std::path::Path,
    into: Option<&str>,
    temp: &TempDir,
    semantic: &mut Semantic,
    ctx: &Context,
) -> anyhow::Result<(Store, Option<HashMap<i64, NoteId>>)> {
    let file =
        std::fs::File::open(corpus).with_context(|| format!("cannot open {}; check the path", corpus.display()))?;
    let prepared = import_jsonl::prepare(std::io::BufReader::new(file), Actor::Human)?;
    let mut store = match into {
        Some(url) => empty_database(url)?,
        None => Store::open(&temp.0.join("eval.db"))?,
    };
    let embedded = semantic.embed_notes(&prepared.texts()).map_err(|e| anyhow!("embedding the corpus: {e}"))?;
    let vectors = embedded.as_ref().map(|(v, model)| (v.as_slice(), model.as_str()));
    let report = import_jsonl::write(&mut store, prepared, ctx.now, vectors)?;
    Ok((store, Some(report.ids.into_iter().collect())))
}

/// Abstention per run, then the sweep of the primary run.
fn print_abstention(reports: &[(RankingMode, EvalReport)]) {
    println!(
        "\n| run | negative: \"no confident match\" | cross-workspace: \"no confident match\" | answerable: wrongly abstained |"
    );
    println!("|---|---:|---:|---:|");
    for (mode, r) in reports {
        let a = &r.abstention;
        println!(
            "| {} | {} of {} | {} of {} | {} of {} |",
            mode.name(),
            a.negative.1,
            a.negative.0,
            a.cross_workspace.1,
            a.cross_workspace.0,
            a.answerable.1,
            a.answerable.0
        );
    }
    let (mode, primary) = &reports[0];
    println!(
        "\nabstention sweep ({}; the default floor is {}): queries abstained on at each similarity floor",
        mode.name(),
        mnemo_core::recall::relevance::SIMILARITY_FLOOR
    );
    println!("\n| floor | negative | cross-workspace | answerable (lost) |");
    println!("|---:|---:|---:|---:|");
    for row in &primary.abstention.sweep {
        println!("| {:.3} | {} | {} | {} |", row.floor, row.negative, row.cross_workspace, row.answerable);
    }
}

fn print_text(ranking: &str, reports: &[(RankingMode, EvalReport)]) {
    let (_, primary) = &reports[0];
    println!("ranking: {ranking}");
    println!("{} queries, {} answerable; k = {}", primary.queries, primary.answerable, primary.k);
    println!(
        "\n| run | recall@k | hit@k | MRR | miss rate | filtered | not in candidates | below cutoff | abstained | silent stale misses | leaks |"
    );
    println!("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|");
    for (mode, r) in reports {
        println!(
            "| {} | {:.3} | {:.3} | {:.3} | {:.3} | {} | {} | {} | {} | {} | {} |",
            mode.name(),
            r.recall_at_k,
            r.hit_at_k,
            r.mrr,
            r.miss_rate,
            r.misses_by_stage["filtered"],
            r.misses_by_stage["not_in_candidates"],
            r.misses_by_stage["below_cutoff"],
            r.misses_by_stage["abstained"],
            r.silent_stale_misses.len(),
            r.cross_workspace_leaks.len()
        );
    }
    println!(
        "\n| category | queries | {} |",
        reports.iter().map(|(m, _)| format!("{} recall@k / hit@k", m.name())).collect::<Vec<_>>().join(" | ")
    );
    println!("|---|---:|{}", "---:|".repeat(reports.len()));
    for (category, c) in &primary.by_category {
        let cells: Vec<String> = reports
            .iter()
            .map(|(_, r)| {
                format!("{:.3} / {:.3}", r.by_category[category].recall_at_k, r.by_category[category].hit_at_k)
            })
            .collect();
        println!("| {category} | {} | {} |", c.queries, cells.join(" | "));
    }
    print_abstention(reports);
    if !primary.silent_stale_misses.is_empty() {
        println!("\nsilent stale misses: {}", primary.silent_stale_misses.join(", "));
    }
    if !primary.cross_workspace_leaks.is_empty() {
        println!("cross-workspace leaks: {}", primary.cross_workspace_leaks.join(", "));
    }
}
