//! One writer per store: [`Store::open`](super::Store::open) takes an
//! exclusive lock on `<store>.lock` (`flock`, non-blocking) for as long as the
//! store is open, so a second campaign on the same store is refused at once,
//! naming the process that holds it, instead of computing every run again.
//!
//! The kernel releases the lock when its process ends, however it ends (a
//! SIGKILL included): a lock file left behind by a dead process is taken over
//! by the next writer, never waited for. Readers (`coapcc report`, Python's
//! `open_store`) take no lock: SQLite's WAL lets them read while a campaign
//! writes.

use std::fs::{File, OpenOptions};
use std::io::Write;
use std::os::unix::fs::{MetadataExt, OpenOptionsExt};
use std::path::{Path, PathBuf};

use anyhow::{bail, Context, Result};

/// The lock file of the store at `store`: beside it, `.lock` appended.
pub fn lock_path(store: &Path) -> PathBuf {
    let mut name = store.as_os_str().to_os_string();
    name.push(".lock");
    PathBuf::from(name)
}

/// The exclusive lock of a store, held until dropped.
#[derive(Debug)]
pub struct WriterLock {
    file: File,
    path: PathBuf,
}

impl WriterLock {
    /// Takes the lock of the store at `store`, or fails at once if another
    /// process (or another open store in this one) holds it.
    pub fn acquire(store: &Path) -> Result<WriterLock> {
        let path = lock_path(store);
        // A few tries: the holder removes the file when it lets go, so the
        // file opened here may be gone by the time the lock is taken.
        for _ in 0..16 {
            let mut file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(false)
                // a link planted in its place is not followed
                .custom_flags(rustix::fs::OFlags::NOFOLLOW.bits() as i32)
                .open(&path)
                .with_context(|| {
                    format!(
                        "{}: cannot open the store's lock file (the store's directory must be \
                         writable to write to it)",
                        path.display()
                    )
                })?;
            match file.try_lock() {
                Ok(()) => {}
                Err(std::fs::TryLockError::WouldBlock) => {
                    let holder = std::fs::read_to_string(&path).unwrap_or_default();
                    let holder = holder.trim();
                    bail!(
                        "{}: another coapcc process{} is writing to this store (it holds {}); \
                         wait for it to finish — runs it stores are not computed again — or \
                         give --store another file",
                        store.display(),
                        if holder.is_empty() {
                            String::new()
                        } else {
                            format!(" ({holder})")
                        },
                        path.display()
                    );
                }
                Err(std::fs::TryLockError::Error(e)) => {
                    return Err(e)
                        .with_context(|| format!("{}: cannot lock the store", path.display()))
                }
            }
            let held = file.metadata()?;
            match std::fs::symlink_metadata(&path) {
                Ok(now) if now.dev() == held.dev() && now.ino() == held.ino() => {}
                _ => continue,
            }
            file.set_len(0)?;
            write!(file, "pid {}", std::process::id())?;
            return Ok(WriterLock { file, path });
        }
        bail!(
            "{}: cannot lock the store (its lock file keeps being replaced)",
            path.display()
        )
    }
}

impl Drop for WriterLock {
    fn drop(&mut self) {
        // Removed while still held: a process that opened the file before
        // the removal finds it replaced and tries again.
        let _ = std::fs::remove_file(&self.path);
        let _ = self.file.unlock();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn one_holder_at_a_time_and_released_on_drop() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.sqlite");
        let first = WriterLock::acquire(&store).unwrap();
        let e = format!("{:#}", WriterLock::acquire(&store).unwrap_err());
        assert!(
            e.contains("s.sqlite") && e.contains(&format!("pid {}", std::process::id())),
            "{e}"
        );
        drop(first);
        assert!(!lock_path(&store).exists(), "removed when released");
        let again = WriterLock::acquire(&store).unwrap();
        drop(again);
        // a lock file left behind (its process died) does not block
        std::fs::write(lock_path(&store), "pid 999999999").unwrap();
        drop(WriterLock::acquire(&store).unwrap());
    }

    #[test]
    fn a_link_in_place_of_the_lock_file_is_not_followed() {
        let dir = tempfile::tempdir().unwrap();
        let store = dir.path().join("s.sqlite");
        let victim = dir.path().join("victim");
        std::fs::write(&victim, "precious").unwrap();
        std::os::unix::fs::symlink(&victim, lock_path(&store)).unwrap();
        assert!(WriterLock::acquire(&store).is_err());
        assert_eq!(std::fs::read_to_string(&victim).unwrap(), "precious");
    }
}
