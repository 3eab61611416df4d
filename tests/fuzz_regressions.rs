//! Replays every file of `fuzz/regressions/` (seeds and inputs the fuzzers once crashed
//! on) through the glTF loader: each must give `Ok` or `Err` without a panic. This is the
//! fuzzers' smoke test for CI, which has no nightly toolchain to run them.
//!
//! The loader catches a panic inside the gltf crate and returns `LoadError::Internal`;
//! none of the committed inputs may need that net (a fuzzer treats such a panic as a
//! crash), so `Internal` fails this test too.

use std::path::PathBuf;

use scene_intersect::io::{load_gltf_slice, LoadError};

#[test]
fn every_regression_input_loads_or_fails_cleanly() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("fuzz/regressions/load_gltf");
    let mut files: Vec<PathBuf> = std::fs::read_dir(&dir)
        .unwrap_or_else(|e| panic!("{}: {e}", dir.display()))
        .map(|e| e.unwrap().path())
        .collect();
    files.sort();
    assert!(files.len() >= 5, "the seed corpus is missing: {files:?}");
    let mut loaded = 0;
    for path in &files {
        let bytes = std::fs::read(path).unwrap();
        match load_gltf_slice(&bytes, None) {
            Ok(_) => loaded += 1,
            Err(LoadError::Internal(m)) => {
                panic!("{}: the gltf crate panicked: {m}", path.display())
            }
            Err(_) => {}
        }
    }
    // The seeds written by `examples/fuzz_seeds.rs` are valid files.
    assert!(loaded >= 5, "only {loaded} of {} files loaded", files.len());
}
