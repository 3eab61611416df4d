//! Resolving a glTF document's buffers: the GLB binary chunk, `data:` URIs and external
//! files.
//!
//! This replaces `gltf::import_buffers`, which (in gltf 1.4) panics on a relative URI
//! whose percent-encoding does not decode to UTF-8 (`"%FF.bin"`), and reads an external
//! file to its end whatever its size (a URI naming `/dev/zero` never returns). Here a
//! relative URI is decoded without panicking, only regular files are read, and no more
//! than the buffer's `byteLength` is read from them: memory stays bounded by what the
//! file claims *and* has.

use std::io::Read;
use std::path::{Path, PathBuf};

use super::LoadError;

/// The data of every buffer of `doc`, in order.
pub(crate) fn load_buffers(
    doc: &gltf::Document,
    base_dir: Option<&Path>,
    mut blob: Option<Vec<u8>>,
) -> Result<Vec<gltf::buffer::Data>, LoadError> {
    let mut out = Vec::new();
    for buffer in doc.buffers() {
        let i = buffer.index();
        let length = buffer.length();
        let data = match buffer.source() {
            gltf::buffer::Source::Bin => blob.take().ok_or_else(|| {
                LoadError::Buffer(format!(
                    "buffer {i} is the GLB binary chunk, but the file has none (or another buffer took it)"
                ))
            })?,
            gltf::buffer::Source::Uri(uri) if uri.starts_with("data:") => {
                // The gltf crate decodes data URIs (base64) without panicking; the decoded
                // size is bounded by the URI's length.
                gltf::buffer::Data::from_source_and_blob(
                    gltf::buffer::Source::Uri(uri),
                    None,
                    &mut None,
                )
                .map_err(|e| LoadError::Buffer(format!("buffer {i}: {e}")))?
                .0
            }
            gltf::buffer::Source::Uri(uri) => read_external(i, uri, length, base_dir)?,
        };
        if data.len() < length {
            return Err(LoadError::Buffer(format!(
                "buffer {i} claims {length} bytes but has only {}",
                data.len()
            )));
        }
        out.push(gltf::buffer::Data(data));
    }
    Ok(out)
}

/// Reads the first `length` bytes of the external file `uri` names.
fn read_external(
    index: usize,
    uri: &str,
    length: usize,
    base_dir: Option<&Path>,
) -> Result<Vec<u8>, LoadError> {
    let err = |reason: String| LoadError::Buffer(format!("buffer {index} ({uri:?}): {reason}"));
    let Some(base) = base_dir else {
        return Err(err(
            "an external file cannot be resolved when loading from memory without a base directory"
                .into(),
        ));
    };
    let path: PathBuf =
        if let Some(rest) = uri.strip_prefix("file://") {
            PathBuf::from(rest)
        } else if let Some(rest) = uri.strip_prefix("file:") {
            PathBuf::from(rest)
        } else if uri.contains(':') {
            return Err(err("unsupported URI scheme".into()));
        } else {
            base.join(percent_decode(uri).ok_or_else(|| {
                err("the percent-encoded file name does not decode to UTF-8".into())
            })?)
        };
    let file = std::fs::File::open(&path).map_err(|e| err(format!("cannot open: {e}")))?;
    let meta = file
        .metadata()
        .map_err(|e| err(format!("cannot read its metadata: {e}")))?;
    if !meta.is_file() {
        return Err(err("not a regular file".into()));
    }
    if meta.len() < length as u64 {
        return Err(err(format!(
            "the file has {} bytes, the buffer claims {length}",
            meta.len()
        )));
    }
    let mut data = Vec::with_capacity(length);
    file.take(length as u64)
        .read_to_end(&mut data)
        .map_err(|e| err(format!("cannot read: {e}")))?;
    Ok(data)
}

/// Decodes `%XX` escapes (a `%` not followed by two hex digits is kept as is, as the
/// `urlencoding` crate does); `None` when the result is not UTF-8.
fn percent_decode(s: &str) -> Option<String> {
    let bytes = s.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        let hex = |b: u8| char::from(b).to_digit(16);
        match (bytes[i], bytes.get(i + 1), bytes.get(i + 2)) {
            (b'%', Some(&h), Some(&l)) if hex(h).is_some() && hex(l).is_some() => {
                out.push((hex(h)? * 16 + hex(l)?) as u8);
                i += 3;
            }
            (b, _, _) => {
                out.push(b);
                i += 1;
            }
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
mod tests {
    use super::percent_decode;

    #[test]
    fn percent_decoding() {
        assert_eq!(percent_decode("a%20b.bin").as_deref(), Some("a b.bin"));
        assert_eq!(percent_decode("100%").as_deref(), Some("100%"));
        assert_eq!(percent_decode("%zz").as_deref(), Some("%zz"));
        // "é" as UTF-8 is C3 A9; a lone FF is not UTF-8.
        assert_eq!(percent_decode("%C3%A9").as_deref(), Some("é"));
        assert_eq!(percent_decode("%FF.bin"), None);
    }
}
