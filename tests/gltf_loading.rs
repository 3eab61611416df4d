//! Loading the real scenes of ../shared/data: figures from SOURCES.md, and a round trip
//! against an independent flattening made with the gltf crate's own reader.

use std::collections::HashMap;
use std::path::PathBuf;

use glam::{DMat4, DVec3, Vec3};
use scene_intersect::drawable::PrimitiveFunctor;
use scene_intersect::graph::{NodeId, NodeKind, SceneGraph};
use scene_intersect::io::{load_gltf, GltfImport, LoadStats};

fn shared_data() -> Option<PathBuf> {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/data");
    if dir.is_dir() {
        Some(dir)
    } else {
        eprintln!("skipping: ../shared/data is absent");
        None
    }
}

/// (file, nodes, meshes, primitives, triangles, mesh instances, instanced triangles),
/// copied from the "Loadability" section of ../shared/data/SOURCES.md.
const FIGURES: &[(&str, usize, usize, usize, usize, usize, usize)] = &[
    ("truck_town.glb", 61, 35, 75, 60930, 20, 30477),
    ("littlest_tokyo.glb", 215, 71, 71, 141802, 71, 141802),
    ("zdm2.glb", 1, 1, 1, 58772, 1, 58772),
    ("milk_truck.glb", 5, 2, 4, 2856, 3, 3624),
    ("truck_town_vehicles.glb", 5, 5, 17, 884, 5, 884),
    ("kenney_truck_red.glb", 6, 6, 6, 946, 6, 946),
];

#[test]
fn shared_files_load_with_the_published_figures() {
    let Some(dir) = shared_data() else { return };
    for &(file, nodes, meshes, primitives, triangles, instances, instanced) in FIGURES {
        let (scene, import) = load_gltf(dir.join(file)).unwrap_or_else(|e| panic!("{file}: {e}"));
        let s = &import.stats;
        assert_eq!(
            (
                s.nodes,
                s.meshes,
                s.primitives,
                s.triangles,
                s.mesh_instances,
                s.instanced_triangles
            ),
            (nodes, meshes, primitives, triangles, instances, instanced),
            "{file}: {s:?}"
        );
        // The graph itself, walked path by path, holds the instanced triangles.
        let world = world_triangles(&scene, &import);
        assert_eq!(
            world.len(),
            instanced,
            "{file}: triangles reached through the functor"
        );
    }
}

#[test]
fn skinned_meshes_are_counted() {
    let Some(dir) = shared_data() else { return };
    let (_, import) = load_gltf(dir.join("littlest_tokyo.glb")).unwrap();
    assert_eq!(import.stats.skinned_nodes, 8);
    let LoadStats {
        non_finite_vertices,
        ..
    } = import.stats;
    assert_eq!(non_finite_vertices, 0);
}

type Key = (usize, usize, u32); // (glTF node, primitive, triangle)

struct Collect<'a> {
    matrix: DMat4,
    node: usize,
    prim: usize,
    out: &'a mut HashMap<Key, [DVec3; 3]>,
    count: &'a mut usize,
}

impl PrimitiveFunctor for Collect<'_> {
    fn triangle(&mut self, v: [Vec3; 3], _i: [u32; 3], p: u32) {
        let w = v.map(|v| self.matrix.transform_point3(v.as_dvec3()));
        self.out.insert((self.node, self.prim, p), w);
        *self.count += 1;
    }
}

/// Every triangle of the scene in world space, found by walking the graph.
fn world_triangles(scene: &SceneGraph, import: &GltfImport) -> Vec<(Key, [DVec3; 3])> {
    let mut out = HashMap::new();
    let mut count = 0;
    let mut stack: Vec<Vec<NodeId>> = vec![vec![import.root]];
    while let Some(path) = stack.pop() {
        let Some(&last) = path.last() else { continue };
        let node = scene.node(last).unwrap();
        if let NodeKind::Geode { drawables } = node.kind() {
            let matrix = scene.local_to_world(&path).unwrap();
            let gltf_node = path
                .iter()
                .rev()
                .find_map(|id| import.gltf_node_index(*id))
                .unwrap();
            for &d in drawables {
                let (_, prim) = import.gltf_primitive(d).unwrap();
                // The batch format's name, and its numbers, for hits on this drawable.
                assert_eq!(
                    import.drawable_name_parts(&path, d),
                    Some((gltf_node, prim))
                );
                let name = format!("n{gltf_node}/p{prim}");
                assert_eq!(import.drawable_name(&path, d), Some(name));
                let mut c = Collect {
                    matrix,
                    node: gltf_node,
                    prim,
                    out: &mut out,
                    count: &mut count,
                };
                scene.drawable(d).unwrap().accept(&mut c);
            }
        }
        for &c in node.children() {
            let mut p = path.clone();
            p.push(c);
            stack.push(p);
        }
    }
    assert_eq!(
        count,
        out.len(),
        "a (node, primitive, triangle) key was reached twice"
    );
    out.into_iter().collect()
}

/// The same triangles, flattened independently with `gltf::import` and its reader, node
/// matrices from the crate (f32).
fn reference_triangles(path: &std::path::Path) -> HashMap<Key, [DVec3; 3]> {
    let (doc, buffers, _) = gltf::import(path).unwrap();
    let scene = doc.default_scene().or_else(|| doc.scenes().next()).unwrap();
    let mut out = HashMap::new();
    let mut stack: Vec<(gltf::Node, DMat4)> = scene.nodes().map(|n| (n, DMat4::IDENTITY)).collect();
    while let Some((node, parent)) = stack.pop() {
        let m = parent * glam::Mat4::from_cols_array_2d(&node.transform().matrix()).as_dmat4();
        if let Some(mesh) = node.mesh() {
            for prim in mesh.primitives() {
                let reader = prim.reader(|b| Some(&buffers[b.index()]));
                let pos: Vec<[f32; 3]> = reader.read_positions().unwrap().collect();
                let idx: Vec<u32> = match reader.read_indices() {
                    Some(i) => i.into_u32().collect(),
                    None => (0..pos.len() as u32).collect(),
                };
                assert_eq!(prim.mode(), gltf::mesh::Mode::Triangles);
                for (t, tri) in idx.chunks_exact(3).enumerate() {
                    let w = [0, 1, 2].map(|k| {
                        m.transform_point3(Vec3::from_array(pos[tri[k] as usize]).as_dvec3())
                    });
                    out.insert((node.index(), prim.index(), t as u32), w);
                }
            }
        }
        for c in node.children() {
            stack.push((c, m));
        }
    }
    out
}

#[test]
fn world_triangles_match_an_independent_flattening() {
    let Some(dir) = shared_data() else { return };
    for &(file, ..) in FIGURES {
        let path = dir.join(file);
        let (scene, import) = load_gltf(&path).unwrap();
        let ours = world_triangles(&scene, &import);
        let reference = reference_triangles(&path);
        assert_eq!(ours.len(), reference.len(), "{file}");
        for (key, tri) in ours {
            let r = reference
                .get(&key)
                .unwrap_or_else(|| panic!("{file}: {key:?} missing"));
            for k in 0..3 {
                // f32 node matrices in the reference: compare relative to the magnitude.
                let tol = 1e-4 * (1.0 + r[k].length());
                assert!(
                    (tri[k] - r[k]).length() <= tol,
                    "{file} {key:?}: {:?} vs {:?}",
                    tri[k],
                    r[k]
                );
            }
        }
    }
}
