//! The real scenes the tests run on: the project's generated city and the glTF scenes
//! of `../shared/data` (skipped, with a note on stderr, when that folder is absent).
#![allow(dead_code)]

use std::path::PathBuf;

/// `data/city.glb`, then the shared scenes when `../shared/data` is there.
pub fn real_scenes() -> Vec<PathBuf> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let mut scenes = vec![root.join("data/city.glb")];
    let shared = root.join("../shared/data");
    if shared.is_dir() {
        for name in [
            "truck_town.glb",
            "zdm2.glb",
            "littlest_tokyo.glb",
            "milk_truck.glb",
            "kenney_truck_red.glb",
            "truck_town_vehicles.glb",
        ] {
            scenes.push(shared.join(name));
        }
    } else {
        eprintln!("skipping the shared scenes: ../shared/data is absent");
    }
    scenes
}
