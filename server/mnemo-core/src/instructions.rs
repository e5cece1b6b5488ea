//! Reading an instruction file a person wrote for agents (CLAUDE.md,
//! AGENTS.md) as directives: each bullet, or each paragraph outside a list,
//! is one rule. Headings give no rule of their own; code blocks are skipped
//! (they are examples, not rules). Pure: text in, rules out.

/// One rule: its first line as the title, the rest as the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Rule {
    pub title: String,
    pub body: String,
}

fn rule(lines: &[String]) -> Option<Rule> {
    let first = lines.first()?.trim();
    if first.is_empty() {
        return None;
    }
    let (title, rest) = match first.find(". ") {
        // A long first line: its first sentence is the title, the rest the body.
        Some(end) if first.len() > 120 => (first[..=end].trim().to_string(), first[end + 1..].trim().to_string()),
        _ => (first.to_string(), String::new()),
    };
    let mut body: Vec<String> = Vec::new();
    if !rest.is_empty() {
        body.push(rest);
    }
    body.extend(lines[1..].iter().map(|l| l.trim().to_string()));
    Some(Rule { title, body: body.join("\n").trim().to_string() })
}

/// The rules of an instruction file, in order.
pub fn rules(text: &str) -> Vec<Rule> {
    let mut out = Vec::new();
    let mut current: Vec<String> = Vec::new();
    let mut in_code = false;
    let flush = |current: &mut Vec<String>, out: &mut Vec<Rule>| {
        if let Some(r) = rule(current) {
            out.push(r);
        }
        current.clear();
    };
    for line in text.lines() {
        let trimmed = line.trim();
        if trimmed.starts_with("```") {
            in_code = !in_code;
            flush(&mut current, &mut out);
            continue;
        }
        if in_code {
            continue;
        }
        let bullet = ["- ", "* ", "+ "].iter().find_map(|b| trimmed.strip_prefix(b)).or_else(|| {
            let (digits, rest) = trimmed.split_once(". ")?;
            digits.chars().all(|c| c.is_ascii_digit()).then_some(rest)
        });
        if trimmed.is_empty() || trimmed.starts_with('#') {
            flush(&mut current, &mut out);
        } else if let Some(item) = bullet.filter(|_| !line.starts_with("  ") || current.is_empty()) {
            flush(&mut current, &mut out);
            current.push(item.to_string());
        } else {
            current.push(trimmed.to_string());
        }
    }
    flush(&mut current, &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bullets_and_paragraphs_are_rules_headings_and_code_are_not() {
        let text = "# Project rules\n\nAlways run the tests through cargo nextest.\nThe plain runner misses the doctests.\n\n## Style\n\n- Keep files small\n- Never commit secrets\n  not even in tests\n1. Squash before merging\n\n```sh\n- not a rule\n```\n";
        let titles: Vec<(String, String)> = rules(text).into_iter().map(|r| (r.title, r.body)).collect();
        assert_eq!(
            titles,
            [
                ("Always run the tests through cargo nextest.".into(), "The plain runner misses the doctests.".into()),
                ("Keep files small".into(), String::new()),
                ("Never commit secrets".into(), "not even in tests".into()),
                ("Squash before merging".into(), String::new()),
            ]
        );
        assert!(rules("").is_empty() && rules("# Only a heading\n").is_empty());
    }
}
