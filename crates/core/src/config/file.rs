//! Reading a project file (a workflow, the agents file, the settings) with a bound on
//! its size. The files are read at start, by the CLI, and again every few seconds by
//! `serve`'s reloader: a stray file of gigabytes named `*.toml` in `workflows/` must be
//! an error that says so, not a process that reads it into memory every time.

use std::io::{self, Read};
use std::path::Path;

/// The most a project file may hold: 1 MiB, hundreds of times the largest workflow we
/// know of.
pub const MAX_FILE_BYTES: u64 = 1 << 20;

/// The bytes of the file at `path`, or an error if it holds more than
/// [`MAX_FILE_BYTES`] (read no further than one byte past it).
pub fn read_bytes(path: &Path) -> io::Result<Vec<u8>> {
    let mut bytes = Vec::new();
    std::fs::File::open(path)?
        .take(MAX_FILE_BYTES + 1)
        .read_to_end(&mut bytes)?;
    if bytes.len() as u64 > MAX_FILE_BYTES {
        return Err(io::Error::new(
            io::ErrorKind::InvalidData,
            "it is larger than 1 MiB, the most a project file may hold",
        ));
    }
    Ok(bytes)
}

/// The text of the file at `path`, bounded as [`read_bytes`] is; UTF-8 or an error.
pub fn read_text(path: &Path) -> io::Result<String> {
    String::from_utf8(read_bytes(path)?)
        .map_err(|_| io::Error::new(io::ErrorKind::InvalidData, "it is not UTF-8 text"))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_file_up_to_the_bound_is_read_and_one_past_it_is_refused() {
        let dir = std::env::temp_dir().join(format!("a2a-config-file-{}", std::process::id()));
        std::fs::create_dir_all(&dir).unwrap();
        let at = dir.join("at.toml");
        std::fs::write(&at, vec![b'#'; MAX_FILE_BYTES as usize]).unwrap();
        assert_eq!(read_text(&at).unwrap().len() as u64, MAX_FILE_BYTES);
        let past = dir.join("past.toml");
        std::fs::write(&past, vec![b'#'; MAX_FILE_BYTES as usize + 1]).unwrap();
        let e = read_text(&past).unwrap_err().to_string();
        assert!(e.contains("larger than 1 MiB"), "{e}");
        let binary = dir.join("binary.toml");
        std::fs::write(&binary, [0xff, 0xfe]).unwrap();
        let e = read_text(&binary).unwrap_err().to_string();
        assert!(e.contains("not UTF-8"), "{e}");
        std::fs::remove_dir_all(&dir).unwrap();
    }
}
