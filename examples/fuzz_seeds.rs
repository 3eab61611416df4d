//! Writes the seed corpus of the `load_gltf` fuzz target: small `.glb` files made with
//! the project's own writer (every primitive mode, indexed and not, shared meshes, a
//! hierarchy of transforms), small `.gltf` files with embedded data URIs, and a copy of
//! `data/city.glb`.
//!
//! ```sh
//! cargo run --example fuzz_seeds -- [OUT_DIR]   # default fuzz/corpus/load_gltf
//! ```
//!
//! The files under 50 KB are also the start of `fuzz/regressions/`, which `cargo test`
//! replays through the loader (`tests/fuzz_regressions.rs`).

use std::path::PathBuf;

use glam::{DMat4, DQuat, DVec3, Vec3};
use scene_intersect::drawable::{Geometry, Indices, PrimitiveMode, PrimitiveSet};
use scene_intersect::graph::{NodeId, SceneGraph};
use scene_intersect::io::gltf_writer::glb_bytes;

fn fan_vertices() -> Vec<Vec3> {
    (0..6)
        .map(|i| {
            let a = i as f32 * 1.1;
            Vec3::new(a.cos(), (i % 2) as f32 * 0.5, a.sin())
        })
        .collect()
}

/// One scene per mode: a geode with an array set and an indexed set, under a transform.
fn mode_scene(mode: PrimitiveMode) -> Result<(SceneGraph, NodeId), Box<dyn std::error::Error>> {
    let mut s = SceneGraph::new();
    let g =
        Geometry::new(fan_vertices()).with_primitive_set(PrimitiveSet::draw_arrays(mode, 0, 6))?;
    let gi = Geometry::new(fan_vertices()).with_primitive_set(PrimitiveSet::DrawElements {
        mode,
        indices: Indices::U16(vec![5, 4, 3, 2, 1, 0, 2]),
    })?;
    let geode = s.add_geode("mesh");
    for (name, geometry) in [("arrays", g), ("elements", gi)] {
        let d = s.add_drawable(name, geometry);
        s.add_drawable_to_geode(geode, d)?;
    }
    let t = s.add_transform(
        "t",
        DMat4::from_scale_rotation_translation(
            DVec3::new(1.0, 2.0, 0.5),
            DQuat::from_rotation_y(0.3),
            DVec3::new(6.4e6, 0.0, -3.2e6),
        ),
    )?;
    s.add_child(t, geode)?;
    Ok((s, t))
}

/// A mesh shared by two transforms under a chain of groups.
fn shared_scene() -> Result<(SceneGraph, NodeId), Box<dyn std::error::Error>> {
    let mut s = SceneGraph::new();
    let tri = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?;
    let d = s.add_drawable("tri", tri);
    let geode = s.add_geode("shared");
    s.add_drawable_to_geode(geode, d)?;
    let root = s.add_transform("root", DMat4::IDENTITY)?;
    let mut parent = root;
    for depth in 0..4 {
        let t = s.add_transform(
            format!("level{depth}"),
            DMat4::from_translation(DVec3::new(1.0, 0.0, 0.0)),
        )?;
        s.add_child(parent, t)?;
        parent = t;
    }
    for x in [0.0, 5.0] {
        let t = s.add_transform("inst", DMat4::from_translation(DVec3::new(x, 0.0, 0.0)))?;
        s.add_child(parent, t)?;
        s.add_child(t, geode)?;
    }
    Ok((s, root))
}

/// A one-triangle `.gltf` with its buffer in a data URI.
fn gltf_with_data_uri() -> Vec<u8> {
    // Vertices (0,0,0), (1,0,0), (0,1,0) as little-endian f32, then indices 0, 1, 2.
    const DATA: &str = "AAAAAAAAAAAAAAAAAACAPwAAAAAAAAAAAAAAAAAAgD8AAAAAAAABAAIAAAA=";
    format!(
        r#"{{"asset": {{"version": "2.0"}}, "scene": 0, "scenes": [{{"nodes": [0]}}],
  "nodes": [{{"mesh": 0, "translation": [6400000.5, 0, 0]}}],
  "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}, "indices": 1}}]}}],
  "buffers": [{{"byteLength": 44, "uri": "data:application/octet-stream;base64,{DATA}"}}],
  "bufferViews": [{{"buffer": 0, "byteOffset": 0, "byteLength": 36}},
                  {{"buffer": 0, "byteOffset": 36, "byteLength": 6}}],
  "accessors": [{{"bufferView": 0, "componentType": 5126, "count": 3, "type": "VEC3",
                  "min": [0,0,0], "max": [1,1,0]}},
                {{"bufferView": 1, "componentType": 5123, "count": 3, "type": "SCALAR"}}]}}"#
    )
    .into_bytes()
}

fn main() -> Result<(), Box<dyn std::error::Error>> {
    let root = PathBuf::from(env!("CARGO_MANIFEST_DIR"));
    let out = std::env::args()
        .nth(1)
        .map_or_else(|| root.join("fuzz/corpus/load_gltf"), PathBuf::from);
    std::fs::create_dir_all(&out)?;
    let mut files: Vec<(String, Vec<u8>)> = Vec::new();
    // The glTF modes (the writer refuses QUADS, QUAD_STRIP and POLYGON).
    for mode in PrimitiveMode::ALL
        .into_iter()
        .filter(|m| m.gltf_mode().is_some())
    {
        let (s, r) = mode_scene(mode)?;
        files.push((
            format!("mode_{mode:?}.glb").to_lowercase(),
            glb_bytes(&s, &[r])?,
        ));
    }
    let (s, r) = shared_scene()?;
    files.push(("shared_mesh.glb".into(), glb_bytes(&s, &[r])?));
    files.push(("data_uri.gltf".into(), gltf_with_data_uri()));
    files.push((
        "empty.gltf".into(),
        br#"{"asset": {"version": "2.0"}}"#.to_vec(),
    ));
    let city = root.join("data/city.glb");
    if let Ok(bytes) = std::fs::read(&city) {
        files.push(("city.glb".into(), bytes));
    }
    for (name, bytes) in &files {
        std::fs::write(out.join(name), bytes)?;
        println!("{} ({} bytes)", out.join(name).display(), bytes.len());
    }
    Ok(())
}
