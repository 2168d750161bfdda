//! Measuring a child process: wall time, CPU time and peak memory.
