//! [`Segment`]: a file of 64-bit words mapped into memory.

use std::fs::{self, File, OpenOptions};
use std::io;
use std::os::unix::fs::{FileExt, OpenOptionsExt};
use std::path::Path;
use std::sync::atomic::AtomicU64;

use memmap2::{MmapOptions, MmapRaw};

/// A file of 64-bit words mapped into this process: read-write for the one
/// publisher that created it ([`Segment::create`]), read-only for readers
/// ([`Segment::open`]). Every access goes through [`Segment::words`], as
/// atomics, so that a reader and the publisher may touch the same words at
/// once (a reader that needs several words consistent uses
/// [`seqlock`](crate::seqlock)).
///
/// The file's size must not change while it is mapped (a shrunk file would
/// fault a reader): publishers never resize a segment; a new one replaces
/// it by a rename, and the old mapping stays valid for who holds it.
#[derive(Debug)]
pub struct Segment {
    map: MmapRaw,
    words: usize,
    file: File,
}

/// Bytes per word.
const WORD: usize = 8;

impl Segment {
    /// Creates the segment at `path` holding `init` (native byte order), as
    /// a file of mode `mode` (less the umask), and maps it read-write. The
    /// file is written whole under a temporary name in the same directory
    /// and renamed over `path`, so that a reader never opens a partial
    /// segment, and one holding the previous segment at that path keeps it.
    pub fn create(path: &Path, init: &[u64], mode: u32) -> io::Result<Segment> {
        if init.is_empty() {
            return Err(io::Error::new(
                io::ErrorKind::InvalidInput,
                "a segment holds at least one word",
            ));
        }
        let name = path.file_name().ok_or_else(|| {
            io::Error::new(
                io::ErrorKind::InvalidInput,
                format!("{}: not a file path", path.display()),
            )
        })?;
        let tmp = path.with_file_name(format!(
            ".{}.{}.tmp",
            name.to_string_lossy(),
            std::process::id()
        ));
        let made = (|| {
            let file = OpenOptions::new()
                .read(true)
                .write(true)
                .create(true)
                .truncate(true)
                .mode(mode)
                .open(&tmp)?;
            let bytes: Vec<u8> = init.iter().flat_map(|w| w.to_ne_bytes()).collect();
            file.write_all_at(&bytes, 0)?;
            let map = MmapOptions::new().len(bytes.len()).map_raw(&file)?;
            fs::rename(&tmp, path)?;
            Ok(Segment {
                map,
                words: init.len(),
                file,
            })
        })();
        if made.is_err() {
            let _ = fs::remove_file(&tmp);
        }
        made
    }

    /// Opens the segment at `path` and maps it read-only. Its size must be
    /// a non-zero whole number of words.
    pub fn open(path: &Path) -> io::Result<Segment> {
        let file = File::open(path)?;
        let len = file.metadata()?.len();
        let words = usize::try_from(len / WORD as u64).unwrap_or(0);
        if len == 0 || len % WORD as u64 != 0 || words == 0 {
            return Err(io::Error::new(
                io::ErrorKind::InvalidData,
                format!(
                    "{}: {len} bytes, not a whole number of words",
                    path.display()
                ),
            ));
        }
        let map = MmapOptions::new()
            .len(words * WORD)
            .map_raw_read_only(&file)?;
        Ok(Segment { map, words, file })
    }

    /// The segment's words. A read-only segment ([`Segment::open`]) may only
    /// be loaded from: a store to it faults.
    pub fn words(&self) -> &[AtomicU64] {
        // SAFETY: the mapping is `words * 8` bytes long, page-aligned (so
        // 8-aligned), and lives as long as `self` (the returned slice
        // borrows it); AtomicU64 has the size and alignment of u64 and any
        // bit pattern is valid. Every access, in this process and in the
        // others that map the file, is atomic, so concurrent access is no
        // data race. The file's size does not change while mapped (the
        // type's contract with publishers).
        unsafe { std::slice::from_raw_parts(self.map.as_ptr().cast::<AtomicU64>(), self.words) }
    }

    /// The mapped file.
    pub fn file(&self) -> &File {
        &self.file
    }
}
