//! Prints the acceleration structures' build time and memory per primitive for a scene.
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
    let (scene, _) = match scene_intersect::io::load_gltf(&path) {
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
    println!(
        "{path}: {primitives} primitives, built in {:.1} ms, {bytes} bytes = {:.1} bytes per primitive",
        build.as_secs_f64() * 1e3,
        bytes as f64 / primitives.max(1) as f64
    );
    ExitCode::SUCCESS
}
