//! Prints the acceleration structures' build time and memory for a scene: per primitive
//! held in the drawables' BVHs (each shared mesh once) and per instanced triangle (each
//! mesh as often as the scene places it, as a flattened copy of the scene would hold it;
//! the measure of `tests/memory_budget.rs`).
//!
//! ```text
//! cargo run --release --example accel_stats -- SCENE.glb
//! ```

use std::process::ExitCode;
use std::time::Instant;

use scene_intersect::accel::WorldChild;

#[path = "common/instanced_triangles.rs"]
mod instanced_triangles;

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
    // Counted by decomposing each placed drawable once (asking for its BVH would build
    // the BVHs the scene index does not keep, and count what they hold).
    let instanced = instanced_triangles::instanced_triangles(&scene, import.root);
    // `x / count` to `digits` places, "-" for no count.
    let ratio = |x: usize, count: usize, digits: usize| {
        if count == 0 {
            "-".to_string()
        } else {
            format!("{:.digits$}", x as f64 / count as f64)
        }
    };
    println!(
        "{path}: {primitives} primitives in drawable BVHs, {instanced} instanced triangles, \
         built in {:.1} ms, {bytes} bytes = {} bytes per BVH primitive, {} per instanced triangle",
        build.as_secs_f64() * 1e3,
        ratio(bytes, primitives, 1),
        ratio(bytes, instanced, 1),
    );
    if let Some(index) = scene.scene_index(import.root) {
        let world = index.world();
        let (mut leaves, mut whole) = (0usize, 0usize);
        world.for_each_child(
            |_| true,
            |child, _| match child {
                WorldChild::Triangles { .. } => leaves += 1,
                _ => whole += 1,
            },
        );
        let triangles = world.triangle_count();
        println!(
            "world tree: {triangles} triangles in {leaves} leaves ({} per leaf), {whole} whole \
             items, {} nodes, {} bytes per triangle; {} instances",
            ratio(triangles, leaves, 2),
            world.nodes().len(),
            ratio(world.memory_bytes(), triangles, 1),
            index.instances().len(),
        );
    }
    ExitCode::SUCCESS
}
