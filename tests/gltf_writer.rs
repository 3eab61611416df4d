//! Integration tests of `io::gltf_writer`: every file written is read back with the
//! `gltf` crate directly (not through this crate's loader), and compared with
//! hand-computed expectations.

use std::collections::HashMap;

use glam::{DMat4, DQuat, DVec3, Mat4, Vec3};
use scene_intersect::drawable::{
    Drawable, Geometry, Indices, PrimitiveFunctor, PrimitiveMode, PrimitiveSet,
};
use scene_intersect::graph::{DrawableId, NodeId, SceneGraph};
use scene_intersect::io::gltf_writer::{glb_bytes, write_glb, GltfWriteError};
use serde_json::value::RawValue;

type TestResult = Result<(), Box<dyn std::error::Error>>;

/// The file parsed and imported by the `gltf` crate.
struct ReadBack {
    doc: gltf::Document,
    buffers: Vec<gltf::buffer::Data>,
}

fn read_back(glb: &[u8]) -> ReadBack {
    gltf::Gltf::from_slice(glb).expect("the gltf crate parses and validates the file");
    let (doc, buffers, _) = gltf::import_slice(glb).expect("the gltf crate imports the file");
    ReadBack { doc, buffers }
}

impl ReadBack {
    fn node(&self, name: &str) -> gltf::Node<'_> {
        self.doc
            .nodes()
            .find(|n| n.name() == Some(name))
            .unwrap_or_else(|| panic!("no node named {name}"))
    }

    fn positions(&self, p: &gltf::Primitive<'_>) -> Vec<Vec3> {
        p.reader(|b| Some(&self.buffers[b.index()]))
            .read_positions()
            .expect("POSITION")
            .map(Vec3::from)
            .collect()
    }

    fn indices(&self, p: &gltf::Primitive<'_>) -> Option<gltf::mesh::util::ReadIndices<'_>> {
        p.reader(|b| Some(&self.buffers[b.index()])).read_indices()
    }

    fn indices_u32(&self, p: &gltf::Primitive<'_>) -> Vec<u32> {
        self.indices(p).expect("indices").into_u32().collect()
    }
}

/// The exact `f64` matrices of the JSON chunk, per node index, parsed from the raw
/// number text (the `gltf` crate reads matrices as `f32`).
fn raw_matrices(glb: &[u8]) -> Vec<Option<[f64; 16]>> {
    let glb = gltf::binary::Glb::from_slice(glb).expect("GLB container");
    let root: HashMap<String, Box<RawValue>> = serde_json::from_slice(&glb.json).expect("JSON");
    let nodes: Vec<HashMap<String, Box<RawValue>>> =
        serde_json::from_str(root["nodes"].get()).expect("nodes");
    nodes
        .iter()
        .map(|n| {
            n.get("matrix").map(|m| {
                let text = m.get().trim_start_matches('[').trim_end_matches(']');
                let v: Vec<f64> = text
                    .split(',')
                    .map(|x| x.trim().parse::<f64>().expect("a number"))
                    .collect();
                v.try_into().expect("16 numbers")
            })
        })
        .collect()
}

fn geometry(vertices: Vec<Vec3>, sets: Vec<PrimitiveSet>) -> Geometry {
    let mut g = Geometry::new(vertices);
    for s in sets {
        g.add_primitive_set(s).expect("a valid primitive set");
    }
    g
}

fn geode_with(scene: &mut SceneGraph, name: &str, drawable: impl Drawable) -> NodeId {
    let d: DrawableId = scene.add_drawable(name, drawable);
    let g = scene.add_geode(name);
    scene.add_drawable_to_geode(g, d).expect("geode");
    g
}

/// Twelve distinct vertices: index i at (i, i², -i).
fn verts(n: usize) -> Vec<Vec3> {
    (0..n)
        .map(|i| Vec3::new(i as f32, (i * i) as f32, -(i as f32)))
        .collect()
}

fn triangle() -> Geometry {
    geometry(
        vec![Vec3::ZERO, Vec3::X, Vec3::Z],
        vec![PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3)],
    )
}

#[test]
fn hierarchy_names_and_exact_matrices() -> TestResult {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    // Values that f32 cannot hold: the file must keep them exactly.
    let m1 = DMat4::from_scale_rotation_translation(
        DVec3::new(0.1, 2.0 / 3.0, 7.0),
        DQuat::from_rotation_y(std::f64::consts::PI / 7.0),
        DVec3::new(1e-9 + 0.2, -123456.789012345, std::f64::consts::E),
    );
    let m2 = DMat4::from_translation(DVec3::new(0.1 + 0.2, 0.0, -0.3));
    let t1 = scene.add_transform("t1", m1)?;
    let t2 = scene.add_transform("t2", m2)?;
    let sw = scene.add_switch("switch");
    let lod = scene.add_lod("lod", None)?;
    let on = scene.add_group("on");
    let off = scene.add_group("off");
    let near = scene.add_group("near");
    let far = scene.add_group("far");
    let mesh = geode_with(&mut scene, "mesh", triangle());
    scene.add_child(root, t1)?;
    scene.add_child(t1, t2)?;
    scene.add_child(t2, mesh)?;
    scene.add_child(root, sw)?;
    scene.add_child(sw, on)?;
    scene.add_child(sw, off)?;
    scene.set_switch_child(sw, 1, false)?;
    scene.add_child(root, lod)?;
    scene.add_lod_child(lod, near, 0.0, 100.0)?;
    scene.add_lod_child(lod, far, 100.0, 1000.0)?;

    let glb = glb_bytes(&scene, &[root])?;
    let rb = read_back(&glb);
    // root, t1, t2, mesh, switch, on, lod, near, far — "off" is disabled.
    assert_eq!(rb.doc.nodes().count(), 9);
    assert!(rb.doc.nodes().all(|n| n.name() != Some("off")));
    let scene0 = rb.doc.default_scene().expect("scene 0");
    assert_eq!(scene0.index(), 0);
    let roots: Vec<_> = scene0.nodes().map(|n| n.name()).collect();
    assert_eq!(roots, vec![Some("root")]);
    let child_names = |name: &str| -> Vec<String> {
        rb.node(name)
            .children()
            .map(|c| c.name().unwrap_or("").to_owned())
            .collect()
    };
    assert_eq!(child_names("root"), ["t1", "switch", "lod"]);
    assert_eq!(child_names("t1"), ["t2"]);
    assert_eq!(child_names("t2"), ["mesh"]);
    assert_eq!(child_names("switch"), ["on"]);
    assert_eq!(child_names("lod"), ["near", "far"]);
    assert!(rb.node("mesh").mesh().is_some());
    assert!(rb.node("root").mesh().is_none());

    let matrices = raw_matrices(&glb);
    assert_eq!(matrices[rb.node("t1").index()], Some(m1.to_cols_array()));
    assert_eq!(matrices[rb.node("t2").index()], Some(m2.to_cols_array()));
    assert_eq!(matrices[rb.node("root").index()], None);
    // The gltf crate reads the same matrix (rounded to f32).
    let read = Mat4::from_cols_array_2d(&rb.node("t1").transform().matrix());
    assert!(read.abs_diff_eq(m1.as_mat4(), 1e-3));
    Ok(())
}

#[test]
fn shared_geode_is_one_mesh_and_shared_nodes_are_duplicated() -> TestResult {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let house = geode_with(&mut scene, "house", triangle());
    let a = scene.add_transform("a", DMat4::from_translation(DVec3::X))?;
    let b = scene.add_transform("b", DMat4::from_translation(DVec3::Z))?;
    // A shared group (with the geode under it) appears under both transforms.
    let shared = scene.add_group("shared");
    scene.add_child(shared, house)?;
    for t in [a, b] {
        scene.add_child(root, t)?;
        scene.add_child(t, shared)?;
    }
    let glb = glb_bytes(&scene, &[root])?;
    let rb = read_back(&glb);
    // root, a, shared, house, b, shared, house.
    assert_eq!(rb.doc.nodes().count(), 7);
    let houses: Vec<_> = rb
        .doc
        .nodes()
        .filter(|n| n.name() == Some("house"))
        .collect();
    assert_eq!(houses.len(), 2);
    assert_ne!(houses[0].index(), houses[1].index());
    let m0 = houses[0].mesh().expect("mesh").index();
    let m1 = houses[1].mesh().expect("mesh").index();
    assert_eq!(m0, m1);
    assert_eq!(rb.doc.meshes().count(), 1);
    assert_eq!(rb.doc.meshes().next().and_then(|m| m.name()), Some("house"));
    // One vertex view, one accessor: the data is not duplicated.
    assert_eq!(rb.doc.views().count(), 1);
    assert_eq!(rb.doc.accessors().count(), 1);
    Ok(())
}

#[test]
fn every_mode_round_trips() -> TestResult {
    use PrimitiveMode as M;
    let modes = [
        (M::Points, 0),
        (M::Lines, 1),
        (M::LineLoop, 2),
        (M::LineStrip, 3),
        (M::Triangles, 4),
        (M::TriangleStrip, 5),
        (M::TriangleFan, 6),
        (M::Quads, 4),
        (M::QuadStrip, 4),
        (M::Polygon, 4),
    ];
    let v = verts(12);
    let sets = modes
        .iter()
        .map(|&(m, _)| PrimitiveSet::draw_arrays(m, 0, 12))
        .collect();
    let mut scene = SceneGraph::new();
    let g = geode_with(&mut scene, "all", geometry(v.clone(), sets));
    let glb = glb_bytes(&scene, &[g])?;
    let rb = read_back(&glb);
    let mesh = rb.doc.meshes().next().expect("one mesh");
    let prims: Vec<_> = mesh.primitives().collect();
    assert_eq!(prims.len(), modes.len());
    for (p, &(mode, gl)) in prims.iter().zip(&modes) {
        assert_eq!(p.mode().as_gl_enum(), gl, "{mode:?}");
        // Whether indexed (quads) or not, every position reads back exactly.
        assert_eq!(rb.positions(p), v, "{mode:?}");
        assert_eq!(
            p.indices().is_some(),
            mode.gltf_mode().is_none(),
            "{mode:?}"
        );
    }
    // The vertices were written once: one vertex view plus three index views.
    assert_eq!(rb.doc.views().count(), 4);
    Ok(())
}

#[test]
fn quads_become_the_decomposed_triangles() -> TestResult {
    use PrimitiveMode as M;
    let v = verts(12);
    let sets = vec![
        PrimitiveSet::draw_arrays(M::Quads, 0, 9),
        PrimitiveSet::draw_arrays(M::QuadStrip, 2, 6),
        PrimitiveSet::draw_arrays(M::Polygon, 1, 5),
        PrimitiveSet::DrawElements {
            mode: M::Quads,
            indices: Indices::U8(vec![3, 2, 1, 0]),
        },
        PrimitiveSet::DrawElements {
            mode: M::QuadStrip,
            indices: Indices::U16(vec![11, 10, 9, 8]),
        },
        PrimitiveSet::DrawArrayLengths {
            mode: M::Quads,
            first: 0,
            lengths: vec![4, 8],
        },
    ];
    let mut scene = SceneGraph::new();
    let g = geode_with(&mut scene, "quads", geometry(v.clone(), sets));
    let rb = read_back(&glb_bytes(&scene, &[g])?);
    let prims: Vec<_> = rb.doc.meshes().next().expect("mesh").primitives().collect();
    assert_eq!(prims.len(), 7);
    assert!(prims.iter().all(|p| p.mode().as_gl_enum() == 4));
    let expected: [&[u32]; 7] = [
        // Quads 0..9: (0,1,2,3) and (4,5,6,7); vertex 8 is left over.
        &[0, 1, 2, 0, 2, 3, 4, 5, 6, 4, 6, 7],
        // Quad strip 2..8: (a,b,c), (b,d,c) per step of two.
        &[2, 3, 4, 3, 5, 4, 4, 5, 6, 5, 7, 6],
        // Polygon 1..6: a fan around vertex 1.
        &[1, 2, 3, 1, 3, 4, 1, 4, 5],
        // Indexed quad (3,2,1,0).
        &[3, 2, 1, 3, 1, 0],
        // Indexed quad strip (11,10,9,8).
        &[11, 10, 9, 10, 8, 9],
        // Two runs: quads 0..4, then 4..12.
        &[0, 1, 2, 0, 2, 3],
        &[4, 5, 6, 4, 6, 7, 8, 9, 10, 8, 10, 11],
    ];
    for (i, (p, want)) in prims.iter().zip(expected).enumerate() {
        assert_eq!(rb.indices_u32(p), want, "primitive {i}");
        assert_eq!(rb.positions(p), v, "primitive {i}");
    }
    // Array quads get u16 indices; indexed ones keep their width.
    let width = |p: &gltf::Primitive<'_>| p.indices().map(|a| a.data_type().as_gl_enum());
    assert_eq!(width(&prims[0]), Some(5123));
    assert_eq!(width(&prims[3]), Some(5121));
    assert_eq!(width(&prims[4]), Some(5123));
    Ok(())
}

#[test]
fn index_widths_are_kept() -> TestResult {
    use gltf::mesh::util::ReadIndices;
    let v = verts(12);
    let sets = vec![
        PrimitiveSet::DrawElements {
            mode: PrimitiveMode::Triangles,
            indices: Indices::U8(vec![0, 1, 2]),
        },
        PrimitiveSet::DrawElements {
            mode: PrimitiveMode::Lines,
            indices: Indices::U16(vec![3, 11, 5, 4]),
        },
        PrimitiveSet::draw_elements_u32(PrimitiveMode::TriangleStrip, vec![7, 8, 9, 10, 6]),
    ];
    let mut scene = SceneGraph::new();
    let g = geode_with(&mut scene, "indexed", geometry(v.clone(), sets));
    let rb = read_back(&glb_bytes(&scene, &[g])?);
    let prims: Vec<_> = rb.doc.meshes().next().expect("mesh").primitives().collect();
    assert_eq!(
        prims
            .iter()
            .map(|p| p.mode().as_gl_enum())
            .collect::<Vec<_>>(),
        [4, 1, 5]
    );
    match rb.indices(&prims[0]) {
        Some(ReadIndices::U8(i)) => assert_eq!(i.collect::<Vec<_>>(), [0, 1, 2]),
        _ => panic!("u8 indices expected"),
    }
    match rb.indices(&prims[1]) {
        Some(ReadIndices::U16(i)) => assert_eq!(i.collect::<Vec<_>>(), [3, 11, 5, 4]),
        _ => panic!("u16 indices expected"),
    }
    match rb.indices(&prims[2]) {
        Some(ReadIndices::U32(i)) => assert_eq!(i.collect::<Vec<_>>(), [7, 8, 9, 10, 6]),
        _ => panic!("u32 indices expected"),
    }
    // All three use the geometry's one full POSITION accessor.
    let pos: Vec<_> = prims
        .iter()
        .map(|p| p.get(&gltf::Semantic::Positions).expect("POSITION").index())
        .collect();
    assert_eq!(pos, [pos[0]; 3]);
    assert_eq!(rb.positions(&prims[1]), v);
    Ok(())
}

#[test]
fn draw_arrays_get_their_own_range_of_vertices() -> TestResult {
    let v = verts(10);
    let sets = vec![
        PrimitiveSet::draw_arrays(PrimitiveMode::TriangleFan, 2, 4),
        PrimitiveSet::DrawArrayLengths {
            mode: PrimitiveMode::LineStrip,
            first: 1,
            lengths: vec![3, 2],
        },
    ];
    let mut scene = SceneGraph::new();
    let g = geode_with(&mut scene, "ranges", geometry(v.clone(), sets));
    let rb = read_back(&glb_bytes(&scene, &[g])?);
    let prims: Vec<_> = rb.doc.meshes().next().expect("mesh").primitives().collect();
    // One primitive for the fan, one per run of the line strips.
    assert_eq!(prims.len(), 3);
    assert_eq!(
        prims
            .iter()
            .map(|p| p.mode().as_gl_enum())
            .collect::<Vec<_>>(),
        [6, 3, 3]
    );
    assert!(prims.iter().all(|p| p.indices().is_none()));
    assert_eq!(rb.positions(&prims[0]), &v[2..6]);
    assert_eq!(rb.positions(&prims[1]), &v[1..4]);
    assert_eq!(rb.positions(&prims[2]), &v[4..6]);
    let fan = prims[0].get(&gltf::Semantic::Positions).expect("POSITION");
    assert_eq!(fan.offset(), 2 * 12);
    assert_eq!(fan.count(), 4);
    // Bounds of vertices 2..6: x 2..5, y 4..25, z -5..-2.
    let bounds = prims[0].bounding_box();
    assert_eq!(bounds.min, [2.0, 4.0, -5.0]);
    assert_eq!(bounds.max, [5.0, 25.0, -2.0]);
    // All ranges are views into the same single vertex buffer view.
    assert_eq!(rb.doc.views().count(), 1);
    Ok(())
}

#[test]
fn custom_drawables_are_written_through_accept() -> TestResult {
    struct Custom;
    impl Drawable for Custom {
        fn accept(&self, f: &mut dyn PrimitiveFunctor) {
            f.point(Vec3::new(9.0, 9.0, 9.0), 0, 0);
            f.triangle([Vec3::ZERO, Vec3::X, Vec3::Y], [0, 1, 2], 1);
            f.line([Vec3::Z, Vec3::ONE], [0, 1], 2);
        }
    }
    let mut scene = SceneGraph::new();
    let g = geode_with(&mut scene, "custom", Custom);
    let rb = read_back(&glb_bytes(&scene, &[g])?);
    let prims: Vec<_> = rb.doc.meshes().next().expect("mesh").primitives().collect();
    assert_eq!(
        prims
            .iter()
            .map(|p| p.mode().as_gl_enum())
            .collect::<Vec<_>>(),
        [4, 1, 0]
    );
    assert_eq!(rb.positions(&prims[0]), [Vec3::ZERO, Vec3::X, Vec3::Y]);
    assert_eq!(rb.positions(&prims[1]), [Vec3::Z, Vec3::ONE]);
    assert_eq!(rb.positions(&prims[2]), [Vec3::splat(9.0)]);
    Ok(())
}

#[test]
fn write_glb_writes_the_same_bytes_and_errors_reach_the_caller() -> TestResult {
    let mut scene = SceneGraph::new();
    let g = geode_with(&mut scene, "tri", triangle());
    let mut out = Vec::new();
    write_glb(&scene, &[g], &mut out)?;
    assert_eq!(out, glb_bytes(&scene, &[g])?);

    // An unknown root is an error, not a panic, and nothing is written.
    let removed = scene.add_group("gone");
    scene.remove_node(removed)?;
    let mut out = Vec::new();
    assert!(matches!(
        write_glb(&scene, &[removed], &mut out),
        Err(GltfWriteError::UnknownNode(_))
    ));
    assert!(out.is_empty());
    Ok(())
}

// ----- the generated city --------------------------------------------------------------

/// Triangles of a glTF primitive in modes 4, 5, 6 (GL's strip order), as positions.
fn triangles_of(rb: &ReadBack, p: &gltf::Primitive<'_>) -> Vec<[Vec3; 3]> {
    let pos = rb.positions(p);
    let idx: Vec<u32> = match rb.indices(p) {
        Some(i) => i.into_u32().collect(),
        None => (0..pos.len() as u32).collect(),
    };
    let v = |i: u32| pos[i as usize];
    let mut out = Vec::new();
    match p.mode().as_gl_enum() {
        4 => {
            for t in idx.chunks_exact(3) {
                out.push([v(t[0]), v(t[1]), v(t[2])]);
            }
        }
        5 => {
            for i in 2..idx.len() {
                if i % 2 == 0 {
                    out.push([v(idx[i - 2]), v(idx[i - 1]), v(idx[i])]);
                } else {
                    out.push([v(idx[i - 1]), v(idx[i - 2]), v(idx[i])]);
                }
            }
        }
        6 => {
            for i in 2..idx.len() {
                out.push([v(idx[0]), v(idx[i - 1]), v(idx[i])]);
            }
        }
        _ => {}
    }
    out
}

/// Every node with its world matrix, walking the default scene.
fn world_nodes(rb: &ReadBack) -> Vec<(gltf::Node<'_>, Mat4)> {
    let mut out = Vec::new();
    let mut stack: Vec<(gltf::Node<'_>, Mat4)> = rb
        .doc
        .default_scene()
        .expect("scene")
        .nodes()
        .map(|n| (n, Mat4::IDENTITY))
        .collect();
    while let Some((n, parent)) = stack.pop() {
        let world = parent * Mat4::from_cols_array_2d(&n.transform().matrix());
        stack.extend(n.children().map(|c| (c, world)));
        out.push((n, world));
    }
    out
}

/// The world-space xz footprint of everything under `node`.
fn footprint(rb: &ReadBack, node: &gltf::Node<'_>, world: Mat4) -> (Vec3, Vec3) {
    let mut lo = Vec3::INFINITY;
    let mut hi = Vec3::NEG_INFINITY;
    let mut stack = vec![(node.clone(), world)];
    while let Some((n, m)) = stack.pop() {
        if let Some(mesh) = n.mesh() {
            for p in mesh.primitives() {
                for v in rb.positions(&p) {
                    let w = m.transform_point3(v);
                    lo = lo.min(w);
                    hi = hi.max(w);
                }
            }
        }
        for c in n.children() {
            let cm = m * Mat4::from_cols_array_2d(&c.transform().matrix());
            stack.push((c, cm));
        }
    }
    (lo, hi)
}

#[test]
fn generated_city_is_sound() {
    let path = concat!(env!("CARGO_MANIFEST_DIR"), "/data/city.glb");
    let Ok(glb) = std::fs::read(path) else {
        eprintln!("{path} not found; run `cargo run --example gen_city` first");
        return;
    };
    let rb = read_back(&glb);
    let nodes = world_nodes(&rb);
    let names: Vec<&str> = nodes.iter().filter_map(|(n, _)| n.name()).collect();
    for required in [
        "city",
        "vehicle",
        "vehicle_body",
        "route",
        "ground",
        "lamp_posts",
        "lights",
    ] {
        assert!(names.contains(&required), "no node named {required}");
    }

    // Mesh reuse: some mesh instanced by at least 10 nodes.
    let mut uses: HashMap<usize, usize> = HashMap::new();
    for (n, _) in &nodes {
        if let Some(m) = n.mesh() {
            *uses.entry(m.index()).or_default() += 1;
        }
    }
    assert!(uses.values().any(|&u| u >= 10), "no mesh is shared");

    // Modes: points, lines, line strip, triangles, strips and fans.
    let modes: std::collections::BTreeSet<u32> = rb
        .doc
        .meshes()
        .flat_map(|m| m.primitives().map(|p| p.mode().as_gl_enum()))
        .collect();
    for m in [0, 1, 3, 4, 5, 6] {
        assert!(modes.contains(&m), "mode {m} missing: {modes:?}");
    }

    // Buildings and the vehicle are closed meshes wound outward: every directed edge
    // appears once, its reverse too, and the signed volume is positive.
    let closed_meshes: std::collections::BTreeSet<usize> = nodes
        .iter()
        .filter(|(n, _)| n.name().is_some_and(|s| s.starts_with("building_")))
        .flat_map(|(n, _)| n.children().filter_map(|c| c.mesh().map(|m| m.index())))
        .chain(rb.node("vehicle_body").mesh().map(|m| m.index()))
        .collect();
    assert!(
        closed_meshes.len() >= 8,
        "{} prototypes",
        closed_meshes.len()
    );
    for mesh in rb
        .doc
        .meshes()
        .filter(|m| closed_meshes.contains(&m.index()))
    {
        let tris: Vec<[Vec3; 3]> = mesh
            .primitives()
            .flat_map(|p| triangles_of(&rb, &p))
            .collect();
        let key = |v: Vec3| v.to_array().map(f32::to_bits);
        let mut edges: HashMap<([u32; 3], [u32; 3]), i32> = HashMap::new();
        let mut volume = 0.0f64;
        for t in &tris {
            for k in 0..3 {
                *edges.entry((key(t[k]), key(t[(k + 1) % 3]))).or_default() += 1;
            }
            volume += f64::from(t[0].dot(t[1].cross(t[2]))) / 6.0;
        }
        let name = mesh.name().unwrap_or("?");
        for (&(a, b), &n) in &edges {
            assert_eq!(n, 1, "{name}: edge used {n} times in one direction");
            assert_eq!(edges.get(&(b, a)), Some(&1), "{name}: open edge");
        }
        assert!(volume > 0.0, "{name}: not wound outward (volume {volume})");
    }

    // The route: a closed line strip at y = 0.5 that never enters a building footprint
    // (checked every metre, with the footprints grown by 2 m).
    let (route, route_world) = nodes
        .iter()
        .find(|(n, _)| n.name() == Some("route"))
        .expect("route");
    let prim = route
        .mesh()
        .expect("route mesh")
        .primitives()
        .next()
        .expect("route primitive");
    assert_eq!(prim.mode().as_gl_enum(), 3);
    let waypoints: Vec<Vec3> = rb
        .positions(&prim)
        .into_iter()
        .map(|p| route_world.transform_point3(p))
        .collect();
    assert!(waypoints.len() >= 5);
    assert_eq!(waypoints.first(), waypoints.last(), "the tour is closed");
    assert!(waypoints.iter().all(|w| w.y == 0.5));
    let footprints: Vec<(Vec3, Vec3)> = nodes
        .iter()
        .filter(|(n, _)| n.name().is_some_and(|s| s.starts_with("building_")))
        .map(|(n, m)| footprint(&rb, n, *m))
        .collect();
    assert!(footprints.len() >= 100, "{} buildings", footprints.len());
    for seg in waypoints.windows(2) {
        let steps = (seg[1] - seg[0]).length().ceil().max(1.0) as usize;
        for s in 0..=steps {
            let p = seg[0].lerp(seg[1], s as f32 / steps as f32);
            for (lo, hi) in &footprints {
                let inside =
                    p.x > lo.x - 2.0 && p.x < hi.x + 2.0 && p.z > lo.z - 2.0 && p.z < hi.z + 2.0;
                assert!(!inside, "route point {p} is inside a building {lo}..{hi}");
            }
        }
    }

    // The vehicle sits at the start of the route, on the ground, facing the first leg.
    let (_, vehicle) = nodes
        .iter()
        .find(|(n, _)| n.name() == Some("vehicle"))
        .expect("vehicle");
    let at = vehicle.transform_point3(Vec3::ZERO);
    assert!((at - Vec3::new(waypoints[0].x, 0.0, waypoints[0].z)).length() < 1e-3);
    let forward = vehicle.transform_vector3(Vec3::Z).normalize();
    let leg = (waypoints[1] - waypoints[0]).normalize();
    assert!(forward.dot(leg) > 0.999);
}
