//! The chain of parent processes, for binding a write to the agent session
//! it came from: the harness (Claude Code, …) is an ancestor both of its
//! hook commands and of the agent's tools (the MCP server, a shell running
//! `mnemo remember`), so the session whose hook shares the nearest ancestor
//! with the writer is the writer's own. Linux `/proc`; elsewhere the chain
//! is empty and the caller falls back to the most recent session.

/// This process, its parent, grandparent, … nearest first (at most 64).
/// The process itself counts: a shell that `exec`s mnemo keeps its pid.
pub fn ancestors() -> Vec<u32> {
    let mut pid = std::process::id();
    let mut chain = vec![pid];
    while chain.len() < 64 {
        match parent_of(pid) {
            Some(parent) if parent > 0 && !chain.contains(&parent) => {
                chain.push(parent);
                pid = parent;
            }
            _ => break,
        }
    }
    chain
}

fn parent_of(pid: u32) -> Option<u32> {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
    // The command name (field 2) is in parentheses and may contain spaces.
    let after_name = &stat[stat.rfind(')')? + 1..];
    after_name.split_whitespace().nth(1)?.parse().ok()
}

/// How near to the writer the nearest common ancestor of `writer` and
/// `other` is (0 = the writer itself); `None` when they share none.
pub fn nearness(writer: &[u32], other: &[u32]) -> Option<usize> {
    writer.iter().position(|pid| other.contains(pid))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn this_process_has_a_parent_chain() {
        let chain = ancestors();
        assert_eq!(chain[..2], [std::process::id(), std::os::unix::process::parent_id()]);
    }

    #[test]
    fn the_nearest_shared_ancestor_wins() {
        let writer = [30, 20, 10, 1];
        assert_eq!(nearness(&writer, &[31, 20, 10, 1]), Some(1));
        assert_eq!(nearness(&writer, &[40, 10, 1]), Some(2));
        assert_eq!(nearness(&writer, &[5]), None);
    }
}
