//! Secrets in note text: agents paste tokens and keys into what they
//! record, and a memory is read back, delivered and exported for years.
//! The rules are gitleaks' maintained default rule set, compiled into the
//! binary as data (`secrets/gitleaks.toml`, MIT, `secrets/LICENSE-gitleaks`);
//! this module only applies them the way gitleaks does to a text: a rule's
//! keywords must occur (case-insensitively) before its regex runs; the
//! secret is the rule's `secretGroup`, else the first non-empty group, else
//! the match; its Shannon entropy must exceed the rule's `entropy`; the
//! global and the rule's allowlists (regexes on the secret, the match or the
//! line; stopwords in the secret; OR or AND) let a finding go. Path and
//! commit conditions do not apply to a note. Regexes compile on first use;
//! the rule set itself is Rust data, written from the TOML by `build.rs`.

use std::sync::OnceLock;

use aho_corasick::AhoCorasick;
use regex::Regex;

/// A secret found in a text: which rule, on which line (1-based).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct SecretFinding {
    pub rule: String,
    pub description: String,
    pub line: usize,
}

/// A rule as `build.rs` writes it from `secrets/gitleaks.toml` (keywords
/// and stopwords already lowercased).
struct StaticRule {
    id: &'static str,
    description: &'static str,
    regex: &'static str,
    keywords: &'static [&'static str],
    entropy: Option<f64>,
    secret_group: Option<usize>,
    allowlists: &'static [StaticAllowlist],
}

struct StaticAllowlist {
    regexes: &'static [&'static str],
    stopwords: &'static [&'static str],
    regex_target: Option<&'static str>,
    condition: Option<&'static str>,
}

include!(concat!(env!("OUT_DIR"), "/gitleaks.rs"));

struct Rule {
    rule: &'static StaticRule,
    regex: OnceLock<Option<Regex>>,
    allowlists: Vec<Allowlist>,
}

#[derive(Clone, Copy, PartialEq)]
enum Target {
    Secret,
    Match,
    Line,
}

struct Allowlist {
    regexes: &'static [&'static str],
    compiled: OnceLock<Vec<Regex>>,
    stopwords: &'static [&'static str],
    target: Target,
    all: bool,
}

impl Allowlist {
    fn from(data: &'static StaticAllowlist) -> Allowlist {
        let target = match data.regex_target {
            Some("match") => Target::Match,
            Some("line") => Target::Line,
            _ => Target::Secret,
        };
        Allowlist {
            regexes: data.regexes,
            compiled: OnceLock::new(),
            stopwords: data.stopwords,
            target,
            all: data.condition.is_some_and(|c| c.eq_ignore_ascii_case("and")),
        }
    }

    /// Whether a finding (its secret, match and line) is allowed to go.
    fn allows(&self, secret: &str, matched: &str, line: &str) -> bool {
        let target = match self.target {
            Target::Secret => secret,
            Target::Match => matched,
            Target::Line => line,
        };
        let regexes = self.compiled.get_or_init(|| self.regexes.iter().filter_map(|r| Regex::new(r).ok()).collect());
        let lowered = secret.to_lowercase();
        let mut checks = Vec::new();
        if !self.regexes.is_empty() {
            checks.push(!target.is_empty() && regexes.iter().any(|r| r.is_match(target)));
        }
        if !self.stopwords.is_empty() {
            checks.push(self.stopwords.iter().any(|w| lowered.contains(w)));
        }
        match self.all {
            true => !checks.is_empty() && checks.iter().all(|c| *c),
            false => checks.iter().any(|c| *c),
        }
    }
}

struct Detector {
    global: Allowlist,
    rules: Vec<Rule>,
    /// Every rule's keywords in one automaton, so a text is read once to
    /// learn which rules may match (not once per keyword).
    keywords: AhoCorasick,
    /// The rule each of `keywords`' patterns belongs to.
    keyword_rule: Vec<usize>,
}

fn detector() -> &'static Detector {
    static DETECTOR: OnceLock<Detector> = OnceLock::new();
    DETECTOR.get_or_init(|| {
        let rules: Vec<Rule> = RULES
            .iter()
            .map(|rule| Rule {
                rule,
                regex: OnceLock::new(),
                allowlists: rule.allowlists.iter().map(Allowlist::from).collect(),
            })
            .collect();
        let (patterns, keyword_rule): (Vec<&str>, Vec<usize>) =
            RULES.iter().enumerate().flat_map(|(index, rule)| rule.keywords.iter().map(move |k| (*k, index))).unzip();
        let keywords = AhoCorasick::new(patterns).expect("the built-in keywords make an automaton");
        Detector { global: Allowlist::from(&GLOBAL_ALLOWLIST), rules, keywords, keyword_rule }
    })
}

/// Shannon entropy of `text`, in bits per character.
fn entropy(text: &str) -> f64 {
    let chars: Vec<char> = text.chars().collect();
    if chars.is_empty() {
        return 0.0;
    }
    let mut counts = std::collections::HashMap::new();
    for c in &chars {
        *counts.entry(*c).or_insert(0usize) += 1;
    }
    let total = chars.len() as f64;
    counts.values().map(|&n| n as f64 / total).map(|p| -p * p.log2()).sum()
}

/// Every secret in `text` the rule set finds, in line order.
pub fn find_secrets(text: &str) -> Vec<SecretFinding> {
    let detector = detector();
    let lowered = text.to_lowercase();
    // A rule with keywords runs only when one of them occurs.
    let mut runs: Vec<bool> = detector.rules.iter().map(|rule| rule.rule.keywords.is_empty()).collect();
    for hit in detector.keywords.find_overlapping_iter(&lowered) {
        runs[detector.keyword_rule[hit.pattern().as_usize()]] = true;
    }
    let mut found = Vec::new();
    for rule in detector.rules.iter().zip(&runs).filter(|(_, runs)| **runs).map(|(rule, _)| rule) {
        let Some(regex) = rule.regex.get_or_init(|| Regex::new(rule.rule.regex).ok()) else { continue };
        for captures in regex.captures_iter(text) {
            let whole = captures.get(0).expect("group 0 is the match");
            let secret = match rule.rule.secret_group {
                Some(group) if group > 0 => captures.get(group).map_or("", |m| m.as_str()),
                _ => captures
                    .iter()
                    .skip(1)
                    .flatten()
                    .map(|m| m.as_str())
                    .find(|s| !s.is_empty())
                    .unwrap_or(whole.as_str()),
            };
            if rule.rule.entropy.is_some_and(|least| entropy(secret) <= least) {
                continue;
            }
            let line_start = text[..whole.start()].rfind('\n').map_or(0, |at| at + 1);
            let line_end = text[whole.end()..].find('\n').map_or(text.len(), |at| whole.end() + at);
            let line = &text[line_start..line_end];
            if detector.global.allows(secret, whole.as_str(), line)
                || rule.allowlists.iter().any(|a| a.allows(secret, whole.as_str(), line))
            {
                continue;
            }
            found.push(SecretFinding {
                rule: rule.rule.id.to_string(),
                description: rule.rule.description.to_string(),
                line: text[..whole.start()].matches('\n').count() + 1,
            });
        }
    }
    found.sort_by(|a, b| (a.line, &a.rule).cmp(&(b.line, &b.rule)));
    found.dedup_by(|a, b| a.line == b.line && a.rule == b.rule);
    found
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn well_known_secret_shapes_are_found_on_their_line() {
        let key = concat!(
            "-----BEGIN RSA PRIVATE KEY-----\nMIIEowIBAAKCAQEAu1SU1LfVLPHCozMxH2Mo4lgOEePzNm0tRgeLezV6ffAt0gun",
            "VTLw7onLRnrq0/IzW7yWR7QkrmBL7jTKEn5u+qKhbwKfBstIs+bMY2Zkp18gnTxK\n-----END RSA PRIVATE KEY-----"
        );
        let github = concat!("ghp_", "a1B2c3D4e5F6g7H8i9J0k1L2m3N4o5P6q7R8");
        let aws = concat!("AKIA", "Z7QW3RTY5UIOBPLK");
        let text = format!("Deploy notes\nthe token is {github}\naws id {aws}\n{key}\n");
        let rules: Vec<(usize, String)> = find_secrets(&text).into_iter().map(|f| (f.line, f.rule)).collect();
        assert!(rules.contains(&(2, "github-pat".into())), "{rules:?}");
        assert!(rules.iter().any(|(line, rule)| *line == 3 && rule.starts_with("aws")), "{rules:?}");
        assert!(rules.iter().any(|(line, rule)| *line == 4 && rule == "private-key"), "{rules:?}");
    }

    #[test]
    fn ordinary_notes_are_not_secrets() {
        for text in [
            "Release the lock before restarting the daemon",
            "Use the token bucket with capacity 40 and refill 10/s",
            "The API key lives in the vault under prod/api; never paste it here",
            "password = ${DB_PASSWORD}",
            "sha256 of the anchored lines is recomputed at check-in",
        ] {
            assert_eq!(find_secrets(text), vec![], "{text}");
        }
    }
}
