//! Checking a program file before anything is spent: a deploy of the wrong file costs the buffer
//! rent and hundreds of write fees before the loader's own verification refuses it.
//!
//! These are the header checks the runtime's loader makes first (64-bit little-endian ELF shared
//! object for the BPF/SBF machine) plus the size limits of the upgradeable loader, with messages
//! that say what the file is instead and what to do.

/// ELF magic: `\x7fELF`.
const MAGIC: [u8; 4] = [0x7f, b'E', b'L', b'F'];
/// Size of a 64-bit ELF header.
const HEADER_LEN: usize = 64;
const ELFCLASS64: u8 = 2;
const ELFDATA2LSB: u8 = 1;
/// Shared object: the only type the loader accepts.
const ET_DYN: u16 = 3;
/// The eBPF machine number older toolchains emit.
pub const EM_BPF: u16 = 247;
/// The SBF machine number of current `cargo build-sbf` output.
pub const EM_SBF: u16 = 263;
/// The largest account the runtime allows (`MAX_PERMITTED_DATA_LENGTH`, 10 MiB).
pub const MAX_ACCOUNT_LEN: usize = 10 * 1024 * 1024;
/// Bytes of the program-data account in front of the program (`size_of_programdata_metadata`).
pub const PROGRAMDATA_HEADER: usize = 45;
/// The largest program that fits a program-data account.
pub const MAX_PROGRAM_LEN: usize = MAX_ACCOUNT_LEN - PROGRAMDATA_HEADER;

/// Why a file is not a program the upgradeable loader would take.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum ElfError {
    #[error("the file is empty")]
    Empty,
    #[error("{0} bytes is too short for an ELF file (the header alone is 64 bytes)")]
    TooShort(usize),
    #[error(
        "not an ELF file (it starts with {0}): pass the program's .so as `cargo build-sbf` writes it \
         to target/deploy/"
    )]
    NotElf(String),
    #[error("a 32-bit ELF file: Solana programs are 64-bit (build with `cargo build-sbf`)")]
    NotElf64,
    #[error(
        "a big-endian ELF file: Solana programs are little-endian (build with `cargo build-sbf`)"
    )]
    BigEndian,
    #[error(
        "an ELF file of type {0} ({1}), not a shared object: Solana programs are built as \
         shared objects (`cargo build-sbf`)"
    )]
    NotSharedObject(u16, &'static str),
    #[error(
        "built for {1} (ELF machine {0}), not for Solana's BPF/SBF virtual machine \
         (machine {EM_BPF} or {EM_SBF}): build it with `cargo build-sbf`"
    )]
    WrongMachine(u16, &'static str),
    #[error("{0} bytes is larger than the {MAX_PROGRAM_LEN} bytes a program-data account can hold")]
    TooLarge(usize),
}

/// Checks that `bytes` is a program the upgradeable loader can take.
pub fn check_program(bytes: &[u8]) -> Result<(), ElfError> {
    if bytes.is_empty() {
        return Err(ElfError::Empty);
    }
    if bytes.len() < 4 || bytes[..4] != MAGIC {
        let head: Vec<String> = bytes.iter().take(4).map(|b| format!("{b:02x}")).collect();
        return Err(ElfError::NotElf(head.join(" ")));
    }
    if bytes.len() < HEADER_LEN {
        return Err(ElfError::TooShort(bytes.len()));
    }
    if bytes[4] != ELFCLASS64 {
        return Err(ElfError::NotElf64);
    }
    if bytes[5] != ELFDATA2LSB {
        return Err(ElfError::BigEndian);
    }
    let e_type = u16::from_le_bytes([bytes[16], bytes[17]]);
    let e_machine = u16::from_le_bytes([bytes[18], bytes[19]]);
    if e_machine != EM_BPF && e_machine != EM_SBF {
        return Err(ElfError::WrongMachine(e_machine, machine_name(e_machine)));
    }
    if e_type != ET_DYN {
        return Err(ElfError::NotSharedObject(e_type, type_name(e_type)));
    }
    if bytes.len() > MAX_PROGRAM_LEN {
        return Err(ElfError::TooLarge(bytes.len()));
    }
    Ok(())
}

fn machine_name(m: u16) -> &'static str {
    match m {
        3 => "x86",
        40 => "ARM",
        62 => "x86-64",
        183 => "AArch64",
        243 => "RISC-V",
        _ => "another machine",
    }
}

fn type_name(t: u16) -> &'static str {
    match t {
        1 => "relocatable object",
        2 => "executable",
        4 => "core dump",
        _ => "unknown",
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn header(class: u8, data: u8, e_type: u16, machine: u16) -> Vec<u8> {
        let mut h = vec![0u8; HEADER_LEN];
        h[..4].copy_from_slice(&MAGIC);
        h[4] = class;
        h[5] = data;
        h[16..18].copy_from_slice(&e_type.to_le_bytes());
        h[18..20].copy_from_slice(&machine.to_le_bytes());
        h
    }

    #[test]
    fn accepts_bpf_and_sbf_shared_objects() {
        assert_eq!(check_program(&header(2, 1, ET_DYN, EM_SBF)), Ok(()));
        assert_eq!(check_program(&header(2, 1, ET_DYN, EM_BPF)), Ok(()));
    }

    #[test]
    fn says_what_the_file_is_instead() {
        assert_eq!(check_program(&[]), Err(ElfError::Empty));
        let err = check_program(b"{\"not\": \"elf\"}").unwrap_err();
        assert_eq!(err, ElfError::NotElf("7b 22 6e 6f".into()));
        assert!(err.to_string().contains("cargo build-sbf"));
        assert_eq!(check_program(&MAGIC), Err(ElfError::TooShort(4)));
        assert_eq!(
            check_program(&header(1, 1, ET_DYN, EM_SBF)),
            Err(ElfError::NotElf64)
        );
        assert_eq!(
            check_program(&header(2, 2, ET_DYN, EM_SBF)),
            Err(ElfError::BigEndian)
        );
        let x86 = check_program(&header(2, 1, ET_DYN, 62)).unwrap_err();
        assert_eq!(x86, ElfError::WrongMachine(62, "x86-64"));
        assert!(
            x86.to_string()
                .starts_with("built for x86-64 (ELF machine 62)")
        );
        assert_eq!(
            check_program(&header(2, 1, 1, EM_SBF)),
            Err(ElfError::NotSharedObject(1, "relocatable object"))
        );
    }

    #[test]
    fn refuses_what_no_account_can_hold() {
        let mut big = header(2, 1, ET_DYN, EM_SBF);
        big.resize(MAX_PROGRAM_LEN, 0);
        assert_eq!(check_program(&big), Ok(()));
        big.push(0);
        assert_eq!(
            check_program(&big),
            Err(ElfError::TooLarge(MAX_PROGRAM_LEN + 1))
        );
    }
}
