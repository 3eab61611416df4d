//! Prints the acceleration structures' build time and memory for a scene: per primitive
//! held in the drawables' BVHs (each shared mesh once) and per instanced primitive (each
//! mesh as often as the scene places it, as a flattened copy of the scene would hold it).
//!
//! ```text
//! cargo run --release --example accel_stats -- SCENE.glb
//! ```

use std::process::ExitCode;
use std::time::Instant;

use scene_intersect::accel::WorldChild;

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
        println!(
            "world tree: {} triangles in {leaves} leaves ({:.2} per leaf), {whole} whole items, \
             {} nodes, {:.1} bytes per triangle; {} instances",
            world.triangle_count(),
            world.triangle_count() as f64 / leaves.max(1) as f64,
            world.nodes().len(),
            world.memory_bytes() as f64 / world.triangle_count().max(1) as f64,
            index.instances().len(),
        );
    }
    ExitCode::SUCCESS
}
