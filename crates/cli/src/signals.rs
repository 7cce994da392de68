//! What every tool does when it is told to stop, and when an input shrinks under it.
//!
//! [`install`] (the first call of every tool's `main` but `ir-run`'s, which runs a program in its
//! own process, writes no file and so calls [`guard_inputs`] alone: the program's signals act as
//! they would on its executable):
//!
//! * starts a thread that waits for SIGINT, SIGTERM and SIGHUP. On one, it removes every
//!   temporary file and directory that exists at that moment
//!   ([`irkit_io::remove_temporaries`]: an output being written, the directory an
//!   executable is built in), then ends the process as the signal's default action would, so
//!   the caller sees the same signal. A child the tool runs (`cc` for `--emit exe`) asked to
//!   receive SIGTERM when the tool dies, so it does not outlive it.
//! * guards memory-mapped inputs against truncation ([`irkit_io::guard_truncation`]): an
//!   input cut short while it is read is reported as changed, naming the file, not a SIGBUS.
//!
//! SIGKILL cannot be caught: a tool killed with it may leave a temporary file named
//! `.<output>.<random>.tmp` (or a `.irkit-exe.<random>` directory) beside its output, never a
//! half-written output.

use signal_hook::consts::{SIGHUP, SIGINT, SIGTERM};
use signal_hook::iterator::Signals;

/// Installs the handling described in the module documentation. Failing to install it is not
/// fatal: the tool runs as it would without (and says nothing).
pub fn install() {
    guard_inputs();
    let Ok(mut signals) = Signals::new([SIGINT, SIGTERM, SIGHUP]) else {
        return;
    };
    let _ = std::thread::Builder::new()
        .name("irkit-signals".into())
        .spawn(move || {
            if let Some(sig) = signals.forever().next() {
                irkit_io::remove_temporaries();
                let _ = signal_hook::low_level::emulate_default_handler(sig);
                std::process::exit(128 + sig);
            }
        });
}

/// Only the guard of memory-mapped inputs, not the handling of SIGINT, SIGTERM and SIGHUP:
/// for a tool that writes no file but runs a program in its own process (`ir-run`), whose
/// signals, its own `raise(SIGTERM)` included, must act at once as they would on the
/// program's executable.
pub fn guard_inputs() {
    let _ = irkit_io::guard_truncation();
}
