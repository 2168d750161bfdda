//! Lines for the person at the terminal that can never panic.
//!
//! `println!` and `eprintln!` panic when the write fails, and after a hang-up every write to
//! the terminal fails (EIO) — from the moment the terminal closes, before any signal handler
//! has run. A closing line written in that window ended a hung-up run with a panic (exit 101)
//! instead of its report and exit 130. These macros write the same text and drop a failed
//! write: the log file keeps the run's account. A house rule (`house_rules`) keeps the `print`
//! family out of everything but tests.

/// A line on standard error, like `eprintln!`, that ignores a failed write.
#[macro_export]
macro_rules! say {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stderr(), $($arg)*);
    }};
}

/// Text on standard error without a newline, like `eprint!`, that ignores a failed write.
#[macro_export]
macro_rules! say_part {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::write!(::std::io::stderr(), $($arg)*);
    }};
}

/// A line on standard output, like `println!`, that ignores a failed write (a closed pipe: the
/// reader has what it wanted).
#[macro_export]
macro_rules! out {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::writeln!(::std::io::stdout(), $($arg)*);
    }};
}

/// Text on standard output without a newline, like `print!`, that ignores a failed write.
#[macro_export]
macro_rules! out_part {
    ($($arg:tt)*) => {{
        use ::std::io::Write as _;
        let _ = ::std::write!(::std::io::stdout(), $($arg)*);
    }};
}

#[cfg(test)]
mod tests {
    /// The reason the macros exist: a write that fails (here into a pipe nobody reads, EPIPE;
    /// after a hang-up, EIO) returns instead of panicking. Standard output and error point at
    /// the dead pipe only for the writes; their descriptors stay taken throughout, so no other
    /// test's file can land on them.
    #[test]
    fn a_failed_write_does_not_panic() {
        use std::io::Write as _;
        let mut ends = [0; 2];
        // SAFETY: plain descriptor calls on descriptors this test owns or restores.
        unsafe {
            assert_eq!(libc::pipe(ends.as_mut_ptr()), 0);
            libc::close(ends[0]);
            let err = libc::dup(2);
            let out = libc::dup(1);
            libc::dup2(ends[1], 2);
            libc::dup2(ends[1], 1);
            crate::say!("lost {}", 1);
            crate::say_part!("lost");
            crate::out!("lost {}", 2);
            // Empty: a failed flush keeps what it could not write, for the restored stdout.
            crate::out_part!("");
            let dead = std::io::stderr().write_all(b"x").is_err();
            libc::dup2(err, 2);
            libc::dup2(out, 1);
            for fd in [err, out, ends[1]] {
                libc::close(fd);
            }
            assert!(dead, "the pipe was meant to be dead");
        }
    }
}
