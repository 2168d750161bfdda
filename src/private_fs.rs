//! Files only their owner can read: logs, journals and reports name the endpoint, the accounts
//! and every transaction of a run. Files are 0600 and directories 0700, also when they existed
//! before with looser modes (a mode set only at creation protects nothing that was already
//! there).

use std::{
    fs::{self, DirBuilder, File, OpenOptions, Permissions},
    io,
    os::unix::fs::{DirBuilderExt, OpenOptionsExt, PermissionsExt},
    path::{Path, PathBuf},
};

pub const FILE_MODE: u32 = 0o600;
pub const DIR_MODE: u32 = 0o700;

/// txpace's data directory (`$XDG_DATA_HOME/txpace`, usually `~/.local/share/txpace`), when
/// there is a home directory.
pub fn data_dir() -> Option<PathBuf> {
    directories::ProjectDirs::from("", "", "txpace").map(|d| d.data_dir().to_path_buf())
}

/// `data_dir()/name`, created when missing; it and the data directory are made 0700 whatever
/// they were, since they are txpace's own.
pub fn data_subdir(name: &str) -> io::Result<Option<PathBuf>> {
    let Some(root) = data_dir() else {
        return Ok(None);
    };
    let dir = root.join(name);
    create_dir_all(&dir)?;
    restrict_dir(&root)?;
    restrict_dir(&dir)?;
    Ok(Some(dir))
}

/// Creates `dir` and its missing parents with mode 0700. Directories that already exist are left
/// as they are (they may be the user's, like `/tmp`), except txpace's own under [`data_dir`].
pub fn create_dir_all(dir: &Path) -> io::Result<()> {
    if dir.as_os_str().is_empty() {
        return Ok(());
    }
    DirBuilder::new()
        .recursive(true)
        .mode(DIR_MODE)
        .create(dir)?;
    if let Some(root) = data_dir()
        && dir.starts_with(&root)
    {
        // Every directory from the data directory down to `dir` is txpace's.
        let mut d = dir;
        loop {
            restrict_dir(d)?;
            if d == root {
                break;
            }
            match d.parent() {
                Some(p) => d = p,
                None => break,
            }
        }
    }
    Ok(())
}

/// Sets mode 0700 on a directory.
pub fn restrict_dir(dir: &Path) -> io::Result<()> {
    fs::set_permissions(dir, Permissions::from_mode(DIR_MODE))
}

/// Sets mode 0600 on an open file, whoever created it.
pub fn restrict(file: &File) -> io::Result<()> {
    file.set_permissions(Permissions::from_mode(FILE_MODE))
}

/// Opens `path` for appending, creating it (and its directory) when missing, mode 0600 either way.
pub fn open_append(path: &Path) -> io::Result<File> {
    if let Some(dir) = path.parent() {
        create_dir_all(dir)?;
    }
    let file = OpenOptions::new()
        .create(true)
        .append(true)
        .mode(FILE_MODE)
        .open(path)?;
    restrict(&file)?;
    Ok(file)
}

/// Creates a file that did not exist before, mode 0600: `dir/stem.ext`, or when that is taken
/// `dir/stem-2.ext`, `dir/stem-3.ext`… Two processes can never get the same file.
pub fn create_unique(dir: &Path, stem: &str, ext: &str) -> io::Result<(PathBuf, File)> {
    create_dir_all(dir)?;
    for n in 1u32.. {
        let name = if n == 1 {
            format!("{stem}.{ext}")
        } else {
            format!("{stem}-{n}.{ext}")
        };
        let path = dir.join(name);
        match OpenOptions::new()
            .write(true)
            .create_new(true)
            .mode(FILE_MODE)
            .open(&path)
        {
            Ok(file) => {
                restrict(&file)?;
                return Ok((path, file));
            }
            Err(e) if e.kind() == io::ErrorKind::AlreadyExists => continue,
            Err(e) => return Err(e),
        }
    }
    Err(io::Error::other("no free file name"))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn mode(p: &Path) -> u32 {
        fs::metadata(p).unwrap().permissions().mode() & 0o777
    }

    #[test]
    fn an_existing_file_is_restricted_when_opened() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("old.log");
        fs::write(&path, "before\n").unwrap();
        fs::set_permissions(&path, Permissions::from_mode(0o644)).unwrap();
        drop(open_append(&path).unwrap());
        assert_eq!(mode(&path), 0o600);
        assert_eq!(fs::read_to_string(&path).unwrap(), "before\n");
    }

    #[test]
    fn created_directories_are_private_and_existing_foreign_ones_untouched() {
        let dir = tempfile::tempdir().unwrap();
        fs::set_permissions(dir.path(), Permissions::from_mode(0o755)).unwrap();
        let deep = dir.path().join("a/b");
        let path = deep.join("f.log");
        drop(open_append(&path).unwrap());
        assert_eq!(mode(&dir.path().join("a")), 0o700);
        assert_eq!(mode(&deep), 0o700);
        assert_eq!(mode(&path), 0o600);
        assert_eq!(mode(dir.path()), 0o755, "not txpace's: left alone");
    }

    #[test]
    fn unique_files_never_collide() {
        let dir = tempfile::tempdir().unwrap();
        let (a, _) = create_unique(dir.path(), "send-1-7", "log").unwrap();
        let (b, _) = create_unique(dir.path(), "send-1-7", "log").unwrap();
        let (c, _) = create_unique(dir.path(), "send-1-7", "log").unwrap();
        assert_eq!(a, dir.path().join("send-1-7.log"));
        assert_eq!(b, dir.path().join("send-1-7-2.log"));
        assert_eq!(c, dir.path().join("send-1-7-3.log"));
        for p in [a, b, c] {
            assert_eq!(mode(&p), 0o600);
        }
    }
}
