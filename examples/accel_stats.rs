//! Prints the acceleration structures' build time and memory for a scene: per primitive
//! held in the drawables' BVHs (each shared mesh once) and per instanced primitive (each
//! mesh as often as the scene places it, as a flattened copy of the scene would hold it).
//!
//! ```text
//! cargo run --release --example accel_stats -- SCENE.glb
//! ```

use std::process::ExitCode;
use std::time::Instant;

fn main() -> ExitCode {
    let Some(path) = std::env::args().nth(1) else {
        eprintln!("usage: accel_stats SCENE.glb");
        return ExitCode::from(2);
    };
    let (scene, import) = match scene_intersect::io::load_gltf(&path) {
        Ok(s) => s,
        Err(e) => {
            eprintln!("error: {e}");
            return ExitCode::FAILURE;
        }
    };
    let start = Instant::now();
    scene.build_acceleration();
    let build = start.elapsed();
    let (bytes, primitives) = scene.acceleration_memory();
    let instanced: usize = scene.scene_index(import.root).map_or(0, |index| {
        index
            .instances()
            .iter()
            .filter_map(|i| scene.primitive_bvh(i.drawable))
            .map(|bvh| bvh.len())
            .sum()
    });
    println!(
        "{path}: {primitives} primitives ({instanced} instanced), built in {:.1} ms, \
         {bytes} bytes = {:.1} bytes per primitive, {:.1} per instanced primitive",
        build.as_secs_f64() * 1e3,
        bytes as f64 / primitives.max(1) as f64,
        bytes as f64 / instanced.max(1) as f64
    );
    ExitCode::SUCCESS
}
