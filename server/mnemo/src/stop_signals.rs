//! Waiting for a long-running command to be told to stop: its stdin closing
//! (Ctrl-D, the end of a pipe) or Ctrl-C / `kill` (SIGINT, SIGTERM). Either
//! way the command then stops as it would at the end of its work — `export
//! --watch` catches the mirror up first — instead of being killed midway.
//!
//! The two signals are blocked in the calling thread before any other
//! thread starts ([`StopSignals::block`]), so every thread made after
//! inherits the block and none is killed by them; a thread of their own
//! takes them with `sigwait`.

use std::io::Read;
use std::sync::mpsc;

/// SIGINT and SIGTERM, blocked in this thread and every thread it makes after.
pub struct StopSignals(libc::sigset_t);

/// What told the command to stop.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    StdinClosed,
    Signal(i32),
}

impl StopSignals {
    /// Block SIGINT and SIGTERM here; call before starting any thread.
    pub fn block() -> StopSignals {
        // SAFETY: `set` is a plain C struct initialised by `sigemptyset`
        // before use; the calls only read and write it and this thread's mask.
        unsafe {
            let mut set: libc::sigset_t = std::mem::zeroed();
            libc::sigemptyset(&mut set);
            libc::sigaddset(&mut set, libc::SIGINT);
            libc::sigaddset(&mut set, libc::SIGTERM);
            libc::pthread_sigmask(libc::SIG_BLOCK, &set, std::ptr::null_mut());
            StopSignals(set)
        }
    }

    /// Wait until stdin closes or one of the signals comes.
    pub fn wait(self) -> Stop {
        let (told, stop) = mpsc::channel();
        let on_signal = told.clone();
        let set = self.0;
        std::thread::spawn(move || {
            let mut signal = 0;
            // SAFETY: `set` holds the signals this thread (and its parent) block.
            if unsafe { libc::sigwait(&set, &mut signal) } == 0 {
                let _ = on_signal.send(Stop::Signal(signal));
            }
        });
        std::thread::spawn(move || {
            let mut sink = [0u8; 4096];
            let mut stdin = std::io::stdin();
            while matches!(stdin.read(&mut sink), Ok(n) if n > 0) {}
            let _ = told.send(Stop::StdinClosed);
        });
        stop.recv().unwrap_or(Stop::StdinClosed)
    }
}
