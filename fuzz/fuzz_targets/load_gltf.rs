//! Arbitrary bytes into the glTF loader: it must return (`Ok` or `Err`), never panic,
//! abort or allocate without bound.
//!
//! # Panics inside the gltf crate
//! The loader runs the gltf crate under `catch_unwind` and returns a panic there as
//! `LoadError::Internal`. cargo-fuzz builds with unwinding (it does not pass
//! `-Cpanic=abort`), but libfuzzer-sys installs a panic *hook* that aborts the process
//! before any unwinding starts, so without help every panic would be a crash, even one the
//! library catches. This target therefore wraps that hook: a panic raised inside the
//! gltf or gltf-json crates is left to unwind to the loader's `catch_unwind`; any other
//! panic (ours, std's, serde_json's...) still aborts and is reported. Set
//! `FUZZ_STRICT_DEPENDENCY_PANICS=1` to report the gltf crate's panics too (to find
//! inputs the loader should refuse before handing them to the crate).
#![no_main]

use std::sync::Once;

use libfuzzer_sys::fuzz_target;

static HOOK: Once = Once::new();

/// True for a panic raised in the gltf crate's own sources.
fn raised_in_gltf(info: &std::panic::PanicHookInfo<'_>) -> bool {
    info.location().is_some_and(|l| {
        let file = l.file();
        file.contains("/gltf-1.") || file.contains("/gltf-json-") || file.contains("/gltf-derive-")
    })
}

fn install_hook() {
    if std::env::var_os("FUZZ_STRICT_DEPENDENCY_PANICS").is_some() {
        return;
    }
    let aborting = std::panic::take_hook();
    std::panic::set_hook(Box::new(move |info| {
        if !raised_in_gltf(info) {
            aborting(info);
        }
    }));
}

fuzz_target!(|bytes: &[u8]| {
    HOOK.call_once(install_hook);
    if let Err(scene_intersect::io::LoadError::Internal(message)) =
        scene_intersect::io::load_gltf_slice(bytes, None)
    {
        // Only the gltf crate's panics may come back as Internal (see above).
        assert!(!message.is_empty());
    }
});
