//! Reading a file whose path comes from a repository (a mirror, a
//! workspace config, a checkout kept in a file): only a regular file, only
//! up to a size (its header: only the header's bytes), and never blocking. A committed symlink to `/dev/zero` or
//! `/dev/stdin`, or a FIFO at the mirror path, would otherwise wedge every
//! command that looks at it or have it read without end.

use std::io::Read;
use std::os::unix::fs::OpenOptionsExt;
use std::path::Path;

/// The most a mirror, a config or a checkout file may hold.
pub const MAX_REPO_FILE_BYTES: u64 = 64 << 20;

/// Why a repository file was not read.
#[derive(Debug, thiserror::Error)]
pub enum RepoFileError {
    #[error("{path} is not a regular file (a FIFO, a device or a directory); mnemo reads only regular files there")]
    NotRegular { path: String },
    #[error("{path} is {size} bytes, over the limit of {limit}; it cannot be a mnemo file")]
    TooLarge { path: String, size: u64, limit: u64 },
    #[error(transparent)]
    Io(#[from] std::io::Error),
}

impl RepoFileError {
    pub fn is_not_found(&self) -> bool {
        matches!(self, RepoFileError::Io(e) if e.kind() == std::io::ErrorKind::NotFound)
    }
}

/// Open `path` without blocking (a FIFO's open would wait for a writer)
/// and check through the open handle that it is a regular file.
fn open_regular(path: &Path) -> Result<(std::fs::File, std::fs::Metadata), RepoFileError> {
    let file = std::fs::OpenOptions::new().read(true).custom_flags(libc::O_NONBLOCK).open(path)?;
    let meta = file.metadata()?;
    if !meta.is_file() {
        return Err(RepoFileError::NotRegular { path: path.display().to_string() });
    }
    Ok((file, meta))
}

/// Read at most `limit` bytes of the regular file at `path`.
pub fn read_limited(path: &Path, limit: u64) -> Result<Vec<u8>, RepoFileError> {
    let shown = || path.display().to_string();
    let (file, meta) = open_regular(path)?;
    if meta.len() > limit {
        return Err(RepoFileError::TooLarge { path: shown(), size: meta.len(), limit });
    }
    let mut bytes = Vec::with_capacity(meta.len() as usize);
    file.take(limit + 1).read_to_end(&mut bytes)?;
    if bytes.len() as u64 > limit {
        return Err(RepoFileError::TooLarge { path: shown(), size: bytes.len() as u64, limit });
    }
    Ok(bytes)
}

/// [`read_limited`] with the default limit, as UTF-8 text.
pub fn read_text(path: &Path) -> Result<String, RepoFileError> {
    let bytes = read_limited(path, MAX_REPO_FILE_BYTES)?;
    String::from_utf8(bytes)
        .map_err(|_| RepoFileError::Io(std::io::Error::new(std::io::ErrorKind::InvalidData, "it is not UTF-8 text")))
}

/// Whether a regular file starts with `prefix` (a header), never blocking;
/// only as many bytes as the prefix holds are read, whatever the file's size.
pub fn starts_with(path: &Path, prefix: &[u8]) -> bool {
    let Ok((file, _)) = open_regular(path) else { return false };
    let mut head = Vec::with_capacity(prefix.len());
    file.take(prefix.len() as u64).read_to_end(&mut head).is_ok() && head == prefix
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_regular_files_are_read_and_whole_only_up_to_a_size() {
        let dir = tempfile::tempdir().unwrap();
        let plain = dir.path().join("plain.md");
        std::fs::write(&plain, "text").unwrap();
        assert_eq!(read_text(&plain).unwrap(), "text");
        assert!(matches!(read_limited(&plain, 2), Err(RepoFileError::TooLarge { .. })));
        let zero = dir.path().join("zero.md");
        std::os::unix::fs::symlink("/dev/zero", &zero).unwrap();
        assert!(matches!(read_text(&zero), Err(RepoFileError::NotRegular { .. })));
        let fifo = dir.path().join("fifo.md");
        assert!(std::process::Command::new("mkfifo").arg(&fifo).status().unwrap().success());
        assert!(matches!(read_text(&fifo), Err(RepoFileError::NotRegular { .. })), "returns at once, never blocks");
        assert!(!starts_with(&fifo, b"text") && !starts_with(&zero, b"\0"), "only a regular file has a header");
        assert!(starts_with(&plain, b"te") && starts_with(&plain, b"text") && !starts_with(&plain, b"texts"));
        let large = dir.path().join("large.md");
        let file = std::fs::File::create(&large).unwrap();
        file.set_len(MAX_REPO_FILE_BYTES + 1).unwrap();
        assert!(starts_with(&large, b"\0\0"), "a header is read from a file of any size");
        assert!(read_text(&dir.path().join("missing.md")).unwrap_err().is_not_found());
    }
}
