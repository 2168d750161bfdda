//! How the C allocator is set up for txpace's few threads.
//!
//! glibc's malloc gives each thread that allocates an arena of its own (up to eight per core),
//! and memory freed in one arena is not reused by another: txpace's engine worker, journal
//! writer, logger, input checkers and dashboard each kept theirs, and a headless 5,000-
//! transaction send peaked at 27 MB against 24 MB with one arena for all (`txpace-bench send`
//! measures peak RSS against Agave's clients). The threads rarely allocate at the same moment,
//! and small blocks come from each thread's own cache without the arena's lock, so sharing one
//! cost no CPU that the same runs could measure (0.82–0.86 s either way, two runs each).

/// One malloc arena for the whole process. Call first thing in `main`, before any thread
/// starts: threads that already allocated keep the arenas they have.
pub fn use_one_arena() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: `mallopt` only sets an allocator parameter; M_ARENA_MAX takes any positive count.
    unsafe {
        libc::mallopt(libc::M_ARENA_MAX, 1);
    }
}
