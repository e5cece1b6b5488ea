//! Giving freed memory back to the system after handling a large text. A
//! language server lives as long as the editor; opening a 20 MB mirror
//! (100k notes) parses it into many short-lived allocations spread over the
//! runtime's threads, and the C allocator keeps the freed pages in its
//! per-thread arenas: measured at 100k, 278 MB resident of which 113 MB
//! was in use. Trimming after each large text brings the resident size down
//! to what is in use (`cargo bench -p mnemo --bench lsp -- --no-model`).

/// Texts at least this large are followed by a trim; smaller ones leave
/// little behind, and a trim walks every arena, so it is not done per edit.
const LARGE_TEXT: usize = 1 << 20;

/// How long after a large text the trim waits: the answers it led to
/// (diagnostics of every entry, tens of thousands at 100k notes) are
/// serialised and written by other tasks after the handler returns, and
/// their memory is free only then.
const SETTLE: std::time::Duration = std::time::Duration::from_millis(500);

/// After handling a text of `bytes`: when it was large, return the
/// allocator's free pages to the system once the answers have been written.
pub fn release_after(bytes: usize) {
    if bytes < LARGE_TEXT {
        return;
    }
    match tokio::runtime::Handle::try_current() {
        Ok(runtime) => {
            runtime.spawn(async {
                tokio::time::sleep(SETTLE).await;
                let _ = tokio::task::spawn_blocking(trim).await;
            });
        }
        Err(_) => trim(),
    }
}

fn trim() {
    // SAFETY: malloc_trim only releases free memory of glibc's arenas.
    unsafe { libc::malloc_trim(0) };
}

/// At most two allocator arenas for the whole process: glibc gives each
/// thread that allocates its own (up to 8 per core), and the freed pages of
/// one are not reused by another, so a text handled on one blocking thread
/// and its answers built on another each leave their high-water mark.
pub fn share_arenas() {
    // SAFETY: mallopt sets an allocator parameter; called before threads start.
    unsafe { libc::mallopt(libc::M_ARENA_MAX, 2) };
}
