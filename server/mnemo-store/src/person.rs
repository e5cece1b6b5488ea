//! Who writes, as a person: the name (`MNEMO_USER`, else the OS user) and
//! the machine (`MNEMO_MACHINE`, else the host name). Every event a process
//! appends records them beside its actor class (agent, human, system), so a
//! store several people share says who did what from where; events written
//! before this was recorded have none, and say so by their absence.

use std::ffi::CStr;

/// A person at a machine.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Person {
    pub name: String,
    pub machine: String,
}

/// At most this many characters of a name or a machine are kept.
const MAX_CHARS: usize = 100;

impl Person {
    /// The person this process writes as; `None` when no name can be found.
    pub fn from_env() -> Option<Person> {
        let var = |name: &str| std::env::var(name).ok().filter(|v| !v.trim().is_empty());
        let name = var("MNEMO_USER").or_else(|| var("USER")).or_else(|| var("LOGNAME")).or_else(os_user)?;
        let machine = var("MNEMO_MACHINE").or_else(host_name).unwrap_or_else(|| "unknown".into());
        Some(Person { name: clean(&name), machine: clean(&machine) })
    }

    /// `alice@laptop`.
    pub fn describe(&self) -> String {
        format!("{}@{}", self.name, self.machine)
    }
}

/// One line, no control characters, bounded.
fn clean(text: &str) -> String {
    text.trim().chars().filter(|c| !c.is_control()).take(MAX_CHARS).collect()
}

fn os_user() -> Option<String> {
    // SAFETY: getpwuid returns a pointer into static storage (or null); the name is copied at once.
    unsafe {
        let entry = libc::getpwuid(libc::geteuid());
        if entry.is_null() || (*entry).pw_name.is_null() {
            return None;
        }
        CStr::from_ptr((*entry).pw_name).to_str().ok().map(str::to_string)
    }
}

fn host_name() -> Option<String> {
    let mut buffer = [0u8; 256];
    // SAFETY: the buffer is writable for its length; gethostname NUL-terminates within it on success.
    let status = unsafe { libc::gethostname(buffer.as_mut_ptr().cast(), buffer.len()) };
    if status != 0 {
        return None;
    }
    CStr::from_bytes_until_nul(&buffer).ok()?.to_str().ok().map(str::to_string).filter(|h| !h.is_empty())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_name_is_one_bounded_line_without_control_characters() {
        assert_eq!(clean("  alice\u{1b}[2J \n"), "alice[2J");
        assert_eq!(clean(&"x".repeat(500)).len(), MAX_CHARS);
        assert!(host_name().is_some_and(|h| !h.is_empty()));
        assert!(os_user().is_some());
    }
}
