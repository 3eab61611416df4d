//! Bad input everywhere gives a clear `Err` (or, for degenerate geometry, a defined
//! result) and loses nothing. Complements `tests/gltf_malformed.rs`, whose cases are not
//! repeated here.

use std::time::{Duration, Instant};

use glam::{DMat4, DVec3, DVec4, Vec3};
use scene_intersect::drawable::{Geometry, Indices, PrimitiveMode, PrimitiveSet};
use scene_intersect::graph::{GraphError, SceneGraph};
use scene_intersect::intersectors::{
    LineSegmentIntersector, Polytope, PolytopeIntersector, QueryError, SphereIntersector,
    MAX_PLANES,
};
use scene_intersect::io::gltf_writer::glb_bytes;
use scene_intersect::io::{
    import_gltf, load_gltf, load_gltf_slice, LoadError, MAX_HIERARCHY_DEPTH, MAX_NODE_PATHS,
};
use scene_intersect::visitor::IntersectionVisitor;

#[path = "support/glb.rs"]
mod glb_file;
use glb_file::glb;

fn base64(bytes: &[u8]) -> String {
    const T: &[u8; 64] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/";
    let mut s = String::new();
    for c in bytes.chunks(3) {
        let n = (u32::from(c[0]) << 16)
            | (u32::from(*c.get(1).unwrap_or(&0)) << 8)
            | u32::from(*c.get(2).unwrap_or(&0));
        for k in 0..4 {
            s.push(if k <= c.len() {
                T[(n >> (18 - 6 * k) & 63) as usize] as char
            } else {
                '='
            });
        }
    }
    s
}

fn f32s(values: &[f32]) -> Vec<u8> {
    values.iter().flat_map(|v| v.to_le_bytes()).collect()
}

/// A glTF with one node holding mesh 0, whose single non-indexed primitive of `mode`
/// reads all of `vertices` (embedded as a data URI).
fn gltf_with_vertices(vertices: &[f32], mode: u32, extra_node: &str) -> Vec<u8> {
    let buffer = f32s(vertices);
    format!(
        r#"{{"asset": {{"version": "2.0"}}, "scene": 0, "scenes": [{{"nodes": [0]}}],
  "nodes": [{{"mesh": 0 {extra_node}}}],
  "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}, "mode": {mode}}}]}}],
  "buffers": [{{"byteLength": {len}, "uri": "data:application/octet-stream;base64,{data}"}}],
  "bufferViews": [{{"buffer": 0, "byteLength": {len}}}],
  "accessors": [{{"bufferView": 0, "componentType": 5126, "count": {count}, "type": "VEC3",
                  "min": [-10, -10, -10], "max": [10, 10, 10]}}]}}"#,
        len = buffer.len(),
        data = base64(&buffer),
        count = vertices.len() / 3,
    )
    .into_bytes()
}

fn load_err(bytes: &[u8]) -> LoadError {
    match load_gltf_slice(bytes, None) {
        Ok(_) => panic!("malformed input was accepted"),
        Err(e) => e,
    }
}

/// Three triangles in the planes y = 3, 2, 1 covering the origin in x/z; the middle
/// one has a NaN x coordinate in its second vertex.
const STACK: [f32; 27] = [
    -1.0,
    3.0,
    -1.0,
    1.0,
    3.0,
    -1.0,
    0.0,
    3.0,
    1.0, //
    -1.0,
    2.0,
    -1.0,
    f32::NAN,
    2.0,
    -1.0,
    0.0,
    2.0,
    1.0, //
    -1.0,
    1.0,
    -1.0,
    1.0,
    1.0,
    -1.0,
    0.0,
    1.0,
    1.0,
];

#[test]
fn nan_vertices_are_counted_and_their_primitives_skipped_by_every_query() {
    let (scene, import) = load_gltf_slice(&gltf_with_vertices(&STACK, 4, ""), None).unwrap();
    assert_eq!(import.stats.non_finite_vertices, 1);
    assert_eq!(
        import.stats.triangles, 3,
        "the NaN triangle is still counted"
    );
    let root = import.root;
    let mut v = IntersectionVisitor::new();

    // A vertical segment through (0, y, 0): triangle 1 would be hit at y = 2, but it
    // reads the NaN vertex; triangles 0 and 2 keep their primitive indices.
    let mut seg = LineSegmentIntersector::new(DVec3::new(0.0, 5.0, 0.0), DVec3::ZERO).unwrap();
    v.apply(&scene, root, &mut seg).unwrap();
    let got: Vec<(u32, f64)> = seg
        .intersections()
        .iter()
        .map(|h| (h.primitive_index, h.world_point.y))
        .collect();
    assert_eq!(got, vec![(0, 3.0), (2, 1.0)]);

    // A ball of radius 1.5 around (0, 2, 0) reaches all three planes (distances 1, 0, 1).
    let mut ball = SphereIntersector::new(DVec3::new(0.0, 2.0, 0.0), 1.5).unwrap();
    v.apply(&scene, root, &mut ball).unwrap();
    let mut got: Vec<u32> = ball
        .intersections()
        .iter()
        .map(|h| h.primitive_index)
        .collect();
    got.sort_unstable();
    assert_eq!(got, vec![0, 2]);

    // A box around everything.
    let mut poly = PolytopeIntersector::new(
        Polytope::from_box(DVec3::splat(-5.0), DVec3::splat(5.0)).unwrap(),
    );
    v.apply(&scene, root, &mut poly).unwrap();
    let mut got: Vec<u32> = poly
        .intersections()
        .iter()
        .map(|h| h.primitive_index)
        .collect();
    got.sort_unstable();
    assert_eq!(got, vec![0, 2]);
}

#[test]
fn a_singular_transform_is_accepted_and_its_subtree_never_hit() {
    // glTF node scale (1, 0, 1) flattens the triangles onto y = 0: the loader keeps
    // the node, and no query reaches what is under it, not even a ball around the
    // origin that the flattened triangles would touch.
    let bytes = gltf_with_vertices(&STACK[..9], 4, r#", "scale": [1, 0, 1]"#);
    let (scene, import) = load_gltf_slice(&bytes, None).unwrap();
    assert_eq!(scene.drawable_count(), 1);
    let mut v = IntersectionVisitor::new();
    let mut ball = SphereIntersector::new(DVec3::ZERO, 10.0).unwrap();
    v.apply(&scene, import.root, &mut ball).unwrap();
    assert!(ball.intersections().is_empty());
    let mut seg =
        LineSegmentIntersector::new(DVec3::new(0.0, 5.0, 0.0), DVec3::new(0.0, -5.0, 0.0)).unwrap();
    v.apply(&scene, import.root, &mut seg).unwrap();
    assert!(seg.intersections().is_empty());

    // The same in a hand-built graph, with a sibling that is hit: the singular subtree
    // does not disturb the rest.
    let mut s = SceneGraph::new();
    let root = s.add_group("root");
    let tri = s.add_drawable(
        "tri",
        Geometry::new(vec![
            Vec3::new(-1.0, 0.0, -1.0),
            Vec3::new(1.0, 0.0, -1.0),
            Vec3::new(0.0, 0.0, 1.0),
        ])
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
        .unwrap(),
    );
    let geode = s.add_geode("g");
    s.add_drawable_to_geode(geode, tri).unwrap();
    for m in [DMat4::from_scale(DVec3::ZERO), DMat4::IDENTITY] {
        let t = s.add_transform("t", m).unwrap();
        s.add_child(root, t).unwrap();
        s.add_child(t, geode).unwrap();
    }
    let mut ball = SphereIntersector::new(DVec3::ZERO, 0.5).unwrap();
    v.apply(&s, root, &mut ball).unwrap();
    assert_eq!(ball.intersections().len(), 1, "only the identity instance");
}

/// A projective matrix (last row not `(0, 0, 0, 1)`) gives the geometry under it no
/// defined place: found by the `query` fuzz target, a polytope clipped such a drawable in
/// its frame, where the plane test's sign flips with the `w` of each point, and kept
/// triangles far outside it. Such matrices are refused, built or loaded, and a refused
/// edit leaves the old matrix; one a rounding away from affine is made affine.
#[test]
fn projective_matrices_are_refused_and_nothing_changes() {
    let mut s = SceneGraph::new();
    let projection = glam::dcamera::rh::proj::opengl::perspective(1.0, 1.5, 0.1, 100.0);
    match s.add_transform("lens", projection) {
        Err(GraphError::NonAffineMatrix { node, row }) => {
            assert_eq!(node, "lens");
            assert_eq!(row, [0.0, 0.0, -1.0, 0.0]);
        }
        other => panic!("a projective matrix was not refused: {other:?}"),
    }
    assert_eq!(s.node_count(), 0);
    let t = s.add_transform("t", DMat4::IDENTITY).unwrap();
    // Even a uniform scale written projectively (w = 2) is refused.
    let mut halved = DMat4::IDENTITY;
    halved.w_axis.w = 2.0;
    assert!(matches!(
        s.set_matrix(t, halved),
        Err(GraphError::NonAffineMatrix { .. })
    ));
    assert_eq!(
        s.node(t).unwrap().transform().unwrap().matrix,
        DMat4::IDENTITY
    );
    // A rounding away from affine, as `parent.inverse() * world` often leaves it, is
    // taken as affine, exactly.
    let mut rounded = DMat4::from_translation(DVec3::new(3.0, 0.0, 0.0));
    rounded.w_axis.w = 1.0 + f64::EPSILON;
    rounded.x_axis.w = -1e-17;
    s.set_matrix(t, rounded).unwrap();
    assert_eq!(
        s.node(t).unwrap().transform().unwrap().matrix,
        DMat4::from_translation(DVec3::new(3.0, 0.0, 0.0))
    );
    // glTF forbids such a node matrix (it must decompose to TRS): the loader says which.
    let matrix = r#", "matrix": [1, 0, 0, 0.5,  0, 1, 0, 0,  0, 0, 1, 0,  0, 0, 0, 1]"#;
    let message = load_err(&gltf_with_vertices(&STACK[..9], 4, matrix)).to_string();
    assert!(
        message.contains("node 0") && message.contains("not affine"),
        "{message}"
    );
}

#[test]
fn non_finite_matrices_are_refused_and_nothing_changes() {
    let mut s = SceneGraph::new();
    let mut m = DMat4::IDENTITY;
    m.w_axis.x = f64::NAN;
    assert!(matches!(
        s.add_transform("nan", m),
        Err(GraphError::NonFiniteMatrix { .. })
    ));
    assert_eq!(s.node_count(), 0);
    let t = s.add_transform("t", DMat4::IDENTITY).unwrap();
    m.w_axis.x = f64::INFINITY;
    assert!(matches!(
        s.set_matrix(t, m),
        Err(GraphError::NonFiniteMatrix { .. })
    ));
    assert_eq!(
        s.node(t).unwrap().transform().unwrap().matrix,
        DMat4::IDENTITY
    );
    // JSON cannot hold NaN; 1e400 is out of f64's range and refused as a number.
    let bytes = gltf_with_vertices(&STACK[..9], 4, r#", "translation": [1e400, 0, 0]"#);
    assert!(load_gltf_slice(&bytes, None).is_err());
}

#[test]
fn finite_matrices_whose_product_overflows_are_never_hit() {
    // Two nested scales of 1e200 multiply to infinity: the visitor cannot invert that
    // frame and skips it, without a panic or a NaN hit.
    let mut s = SceneGraph::new();
    let root = s.add_group("root");
    let a = s
        .add_transform("a", DMat4::from_scale(DVec3::splat(1e200)))
        .unwrap();
    let b = s
        .add_transform("b", DMat4::from_scale(DVec3::splat(1e200)))
        .unwrap();
    s.add_child(root, a).unwrap();
    s.add_child(a, b).unwrap();
    let geode = s.add_geode("g");
    let d = s.add_drawable(
        "tri",
        Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Z])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
            .unwrap(),
    );
    s.add_drawable_to_geode(geode, d).unwrap();
    s.add_child(b, geode).unwrap();
    let mut seg =
        LineSegmentIntersector::new(DVec3::new(0.1, 1.0, 0.1), DVec3::new(0.1, -1.0, 0.1)).unwrap();
    IntersectionVisitor::new()
        .apply(&s, root, &mut seg)
        .unwrap();
    assert!(seg
        .intersections()
        .iter()
        .all(|h| h.world_point.is_finite()));
}

#[test]
fn empty_scenes_and_empty_primitive_sets_give_no_hits() {
    let mut s = SceneGraph::new();
    let root = s.add_group("root");
    let queries = |s: &SceneGraph| {
        let mut v = IntersectionVisitor::new();
        let mut seg =
            LineSegmentIntersector::new(DVec3::new(0.0, 5.0, 0.0), DVec3::new(0.0, -5.0, 0.0))
                .unwrap();
        v.apply(s, root, &mut seg).unwrap();
        let mut ball = SphereIntersector::new(DVec3::ZERO, 100.0).unwrap();
        v.apply(s, root, &mut ball).unwrap();
        let mut poly = PolytopeIntersector::new(
            Polytope::from_box(DVec3::splat(-100.0), DVec3::splat(100.0)).unwrap(),
        );
        v.apply(s, root, &mut poly).unwrap();
        seg.intersections().len() + ball.intersections().len() + poly.intersections().len()
    };
    assert_eq!(queries(&s), 0, "a lone root");
    let geode = s.add_geode("empty geode");
    s.add_child(root, geode).unwrap();
    assert_eq!(queries(&s), 0, "a geode without drawables");
    let vertices = vec![Vec3::new(-1.0, 0.0, -1.0), Vec3::X, Vec3::Z];
    let empty_sets = [
        PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 0),
        // A count of 0 reads nothing, whatever `first` says.
        PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, u32::MAX, 0),
        PrimitiveSet::DrawArrayLengths {
            mode: PrimitiveMode::TriangleStrip,
            first: 0,
            lengths: vec![],
        },
        PrimitiveSet::DrawElements {
            mode: PrimitiveMode::Triangles,
            indices: Indices::U8(vec![]),
        },
        // Two vertices make no triangle, no strip triangle and no fan triangle.
        PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 2),
        PrimitiveSet::draw_arrays(PrimitiveMode::TriangleFan, 0, 2),
    ];
    let mut g = Geometry::new(vertices.clone());
    for set in empty_sets {
        g.add_primitive_set(set).unwrap();
    }
    assert_eq!(g.primitive_count(), 0);
    let d = s.add_drawable("empty sets", g);
    s.add_drawable_to_geode(geode, d).unwrap();
    let no_sets = s.add_drawable("no sets", Geometry::new(vertices));
    s.add_drawable_to_geode(geode, no_sets).unwrap();
    let no_vertices = s.add_drawable("nothing", Geometry::default());
    s.add_drawable_to_geode(geode, no_vertices).unwrap();
    assert_eq!(queries(&s), 0, "drawables without primitives");
}

#[test]
fn index_past_the_vertex_array_is_refused_in_every_form() {
    let three = || Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y]);
    let bad = [
        PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 1, 3),
        PrimitiveSet::draw_arrays(PrimitiveMode::Points, u32::MAX, u32::MAX),
        PrimitiveSet::DrawArrayLengths {
            mode: PrimitiveMode::Lines,
            first: 0,
            lengths: vec![2, 2],
        },
        PrimitiveSet::DrawElements {
            mode: PrimitiveMode::Triangles,
            indices: Indices::U16(vec![0, 1, 3]),
        },
        PrimitiveSet::draw_elements_u32(PrimitiveMode::Points, vec![u32::MAX]),
    ];
    for set in bad {
        let mut g = three();
        let e = g.add_primitive_set(set.clone()).unwrap_err();
        assert!(matches!(e, GraphError::IndexOutOfRange { .. }), "{set:?}");
        assert!(g.primitive_sets().is_empty(), "nothing added");
    }
    // Shrinking the vertex array under an existing set is refused too.
    let mut g = three()
        .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))
        .unwrap();
    assert!(g.set_vertices(vec![Vec3::ZERO]).is_err());
    assert_eq!(g.vertices().len(), 3);
}

#[test]
fn polytope_plane_counts_zero_one_sixty_four_sixty_five() {
    assert_eq!(Polytope::new([]).unwrap_err(), QueryError::NoPlanes);
    let plane = |i: usize| {
        let a = i as f64 * 0.1;
        DVec4::new(a.cos(), 0.0, a.sin(), 1.0)
    };
    assert!(Polytope::new((0..1).map(plane)).is_ok());
    assert_eq!(
        Polytope::new((0..MAX_PLANES).map(plane))
            .unwrap()
            .planes()
            .len(),
        64
    );
    assert_eq!(
        Polytope::new((0..=MAX_PLANES).map(plane)).unwrap_err(),
        QueryError::TooManyPlanes(65)
    );
    // A single half-space works as a query: everything with x >= 0.5.
    let mut s = SceneGraph::new();
    let root = s.add_group("root");
    let geode = s.add_geode("g");
    s.add_child(root, geode).unwrap();
    let d = s.add_drawable(
        "points",
        Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::new(2.0, 0.0, 0.0)])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 0, 3))
            .unwrap(),
    );
    s.add_drawable_to_geode(geode, d).unwrap();
    let mut half =
        PolytopeIntersector::new(Polytope::new([DVec4::new(1.0, 0.0, 0.0, -0.5)]).unwrap());
    IntersectionVisitor::new()
        .apply(&s, root, &mut half)
        .unwrap();
    // Distances to the plane x = 0.5: 0.5 for x = 1 and 1.5 for x = 2, in that order.
    let got: Vec<(u32, f64)> = half
        .intersections()
        .iter()
        .map(|h| (h.primitive_index, h.distance))
        .collect();
    assert_eq!(got, vec![(1, 0.5), (2, 1.5)]);
}

/// JSON of a one-triangle GLB whose buffer claims `byte_length` and whose POSITION
/// accessor claims `count` vertices.
fn glb_json(byte_length: u64, count: u64) -> Vec<u8> {
    format!(
        r#"{{"asset": {{"version": "2.0"}}, "scene": 0, "scenes": [{{"nodes": [0]}}],
  "nodes": [{{"mesh": 0}}],
  "meshes": [{{"primitives": [{{"attributes": {{"POSITION": 0}}}}]}}],
  "buffers": [{{"byteLength": {byte_length}}}],
  "bufferViews": [{{"buffer": 0, "byteLength": {byte_length}}}],
  "accessors": [{{"bufferView": 0, "componentType": 5126, "count": {count}, "type": "VEC3",
                  "min": [0, 0, 0], "max": [1, 1, 0]}}]}}"#
    )
    .into_bytes()
}

/// Loads `bytes`, expecting an error within a second: no claim in the file may make the
/// loader allocate or read what the file does not have.
fn fails_fast(bytes: &[u8], what: &str) -> LoadError {
    let start = Instant::now();
    let r = load_gltf_slice(bytes, None);
    let elapsed = start.elapsed();
    assert!(
        elapsed < Duration::from_secs(1),
        "{what}: took {elapsed:?} on a {} byte file",
        bytes.len()
    );
    match r {
        Ok(_) => panic!("{what}: accepted"),
        Err(e) => e,
    }
}

#[test]
fn huge_claims_in_a_small_file_fail_fast() {
    let tri = f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let good = glb(&glb_json(36, 3), &tri, None, None);
    assert!(load_gltf_slice(&good, None).is_ok());
    assert!(good.len() < 1024);

    // The GLB header claims 4 GiB - 4 bytes in total.
    let e = fails_fast(
        &glb(&glb_json(36, 3), &tri, Some(u32::MAX - 3), None),
        "header",
    );
    assert!(matches!(e, LoadError::Gltf(_)), "{e}");
    // The BIN chunk claims 4 GiB - 4 bytes.
    fails_fast(
        &glb(&glb_json(36, 3), &tri, None, Some(u32::MAX - 3)),
        "chunk",
    );
    // The buffer claims 4 GiB (and 2^53) while 36 bytes follow.
    for claim in [4u64 << 30, 1 << 53] {
        let e = fails_fast(&glb(&glb_json(claim, 3), &tri, None, None), "byteLength");
        assert!(
            e.to_string().contains("byteLength") || e.to_string().contains("bytes"),
            "{e}"
        );
    }
    // The accessor claims 2^30 and 2^62 vertices (12 GiB, 48 EiB).
    for count in [1u64 << 30, 1 << 62] {
        let e = fails_fast(&glb(&glb_json(36, count), &tri, None, None), "count");
        assert!(
            matches!(e, LoadError::Accessor { .. } | LoadError::Gltf(_)),
            "{e}"
        );
    }
}

#[test]
fn truncated_or_bit_flipped_files_of_our_own_writer_are_errors_not_panics() {
    let mut s = SceneGraph::new();
    let geode = s.add_geode("g");
    let d = s.add_drawable(
        "strip",
        Geometry::new(
            (0..8)
                .map(|i| Vec3::new(i as f32, (i % 2) as f32, 0.0))
                .collect(),
        )
        .with_primitive_set(PrimitiveSet::DrawElements {
            mode: PrimitiveMode::TriangleStrip,
            indices: Indices::U16((0..8).collect()),
        })
        .unwrap(),
    );
    s.add_drawable_to_geode(geode, d).unwrap();
    let t = s.add_transform("t", DMat4::IDENTITY).unwrap();
    s.add_child(t, geode).unwrap();
    let bytes = glb_bytes(&s, &[t]).unwrap();
    assert!(load_gltf_slice(&bytes, None).is_ok());
    // Every truncation: the container's lengths no longer match.
    for cut in 0..bytes.len() {
        assert!(
            load_gltf_slice(&bytes[..cut], None).is_err(),
            "cut at {cut}"
        );
    }
    // Every byte of the file set to 0x00, 0xFF and 0x7F in turn: any outcome but a panic
    // (and an error or the right triangle count if it loads).
    for i in 0..bytes.len() {
        for value in [0x00, 0xFF, 0x7F] {
            let mut b = bytes.clone();
            b[i] = value;
            if let Ok((_, import)) = load_gltf_slice(&b, None) {
                assert!(import.stats.triangles <= 6, "byte {i} = {value}");
            }
        }
    }
    // The same for a .gltf text file: every truncation of the JSON is an error.
    let text = gltf_with_vertices(&STACK[..9], 4, "");
    for cut in 0..text.len() {
        assert!(load_gltf_slice(&text[..cut], None).is_err(), "cut at {cut}");
    }
}

#[test]
fn position_accessor_index_past_the_accessors_is_an_error() {
    // gltf-json 1.4.1 indexes the accessor list with this before validating it, and
    // panics; the loader must refuse the file itself (a caught panic is not enough: under
    // a fuzzer's abort-on-panic hook it is a crash).
    let text = String::from_utf8(gltf_with_vertices(&STACK[..9], 4, "")).unwrap();
    let bad = text.replace(r#""POSITION": 0"#, r#""POSITION": 7"#);
    let e = load_err(bad.as_bytes());
    assert!(matches!(e, LoadError::Gltf(_)), "{e}");
    assert!(e.to_string().contains("POSITION"), "{e}");
}

#[test]
fn buffer_uri_with_bad_percent_encoding_is_a_buffer_error() {
    // gltf 1.4's import_buffers unwraps the percent-decoding of a relative URI and
    // panics on "%FF" (not UTF-8).
    let json =
        br#"{"asset": {"version": "2.0"}, "buffers": [{"byteLength": 4, "uri": "%FF.bin"}]}"#;
    for base in [None, Some(std::env::temp_dir())] {
        match load_gltf_slice(json, base.as_deref()) {
            Err(LoadError::Buffer(m)) => assert!(!m.is_empty()),
            other => panic!("{other:?}"),
        }
    }
}

/// A directory of its own under the system temporary directory.
fn temp_dir(name: &str) -> std::path::PathBuf {
    let dir = std::env::temp_dir().join(format!("scene-intersect-{name}-{}", std::process::id()));
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

#[test]
fn external_buffers_are_read_only_as_far_as_claimed_and_only_from_files() {
    let dir = temp_dir("external");
    let tri = f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    let mut big = tri.clone();
    big.resize(1 << 20, 7); // 1 MiB file, of which the buffer claims 36 bytes
    std::fs::write(dir.join("tri.bin"), &big).unwrap();
    let gltf = |uri: &str, len: u64| {
        String::from_utf8(glb_json(len, 3))
            .unwrap()
            .replace(
                &format!(r#"{{"byteLength": {len}}}]"#),
                &format!(r#"{{"byteLength": {len}, "uri": "{uri}"}}]"#),
            )
            .into_bytes()
    };
    let path = dir.join("scene.gltf");
    std::fs::write(&path, gltf("tri.bin", 36)).unwrap();
    let (_, import) = load_gltf(&path).unwrap();
    assert_eq!(import.stats.triangles, 1);
    // Percent-encoded names resolve ("tri%2Ebin" is "tri.bin").
    std::fs::write(&path, gltf("tri%2Ebin", 36)).unwrap();
    assert!(load_gltf(&path).is_ok());
    // More than the file has.
    std::fs::write(&path, gltf("tri.bin", 4 << 30)).unwrap();
    assert!(matches!(load_gltf(&path), Err(LoadError::Buffer(_))));
    // A device that never ends, and a directory, are not buffer files.
    for uri in ["/dev/zero", "file:///dev/zero", "."] {
        std::fs::write(&path, gltf(uri, 36)).unwrap();
        let start = Instant::now();
        let r = load_gltf(&path);
        assert!(matches!(r, Err(LoadError::Buffer(_))), "{uri}: {r:?}");
        assert!(start.elapsed() < Duration::from_secs(1));
    }
    // A missing file.
    std::fs::write(&path, gltf("missing.bin", 36)).unwrap();
    assert!(matches!(load_gltf(&path), Err(LoadError::Buffer(_))));
    std::fs::remove_dir_all(&dir).unwrap();
}

#[test]
fn shared_nodes_cannot_multiply_into_billions_of_paths() {
    // 40 levels of two nodes, each the parent of both nodes of the next level: 2^40
    // paths reach the last level. A query would walk every one of them.
    let levels = 40;
    let mut nodes = Vec::new();
    for level in 0..levels {
        for _ in 0..2 {
            if level + 1 < levels {
                nodes.push(format!(
                    r#"{{"children": [{}, {}]}}"#,
                    2 * (level + 1),
                    2 * (level + 1) + 1
                ));
            } else {
                nodes.push(r#"{"mesh": 0}"#.to_string());
            }
        }
    }
    let base = String::from_utf8(gltf_with_vertices(&STACK[..9], 4, "")).unwrap();
    let json = base
        .replace(r#""nodes": [0]"#, r#""nodes": [0, 1]"#)
        .replace(
            r#""nodes": [{"mesh": 0 }]"#,
            &format!(r#""nodes": [{}]"#, nodes.join(",")),
        );
    let e = load_err(json.as_bytes());
    assert!(matches!(e, LoadError::Hierarchy(_)), "{e}");
    assert!(e.to_string().contains(&MAX_NODE_PATHS.to_string()), "{e}");
    // 8 levels (2^8 paths per last-level node) load, and the statistics count them.
    let nodes8: Vec<String> = (0..16)
        .map(|i| {
            let level = i / 2;
            if level + 1 < 8 {
                format!(
                    r#"{{"children": [{}, {}]}}"#,
                    2 * (level + 1),
                    2 * (level + 1) + 1
                )
            } else {
                r#"{"mesh": 0}"#.to_string()
            }
        })
        .collect();
    let json8 = base
        .replace(r#""nodes": [0]"#, r#""nodes": [0, 1]"#)
        .replace(
            r#""nodes": [{"mesh": 0 }]"#,
            &format!(r#""nodes": [{}]"#, nodes8.join(",")),
        );
    let (_, import) = load_gltf_slice(json8.as_bytes(), None).unwrap();
    // Each of the two last-level nodes is reached by 2 * 2^6 = 128 paths... from each of
    // the 2 roots: 2^7 = 128 paths each, 256 mesh instances in all.
    assert_eq!(import.stats.mesh_instances, 256);
}

/// A chain of `depth` glTF nodes, the last holding the one-triangle mesh.
fn chain(depth: usize) -> Vec<u8> {
    let nodes: Vec<String> = (0..depth)
        .map(|i| {
            if i + 1 < depth {
                format!(
                    r#"{{"children": [{}], "translation": [0, 0.001, 0]}}"#,
                    i + 1
                )
            } else {
                r#"{"mesh": 0}"#.to_string()
            }
        })
        .collect();
    String::from_utf8(gltf_with_vertices(&STACK[..9], 4, ""))
        .unwrap()
        .replace(
            r#""nodes": [{"mesh": 0 }]"#,
            &format!(r#""nodes": [{}]"#, nodes.join(",")),
        )
        .into_bytes()
}

#[test]
fn the_deepest_accepted_hierarchy_loads_and_is_queried_on_a_small_stack() {
    let e = load_err(&chain(MAX_HIERARCHY_DEPTH + 1));
    assert!(matches!(e, LoadError::Hierarchy(_)), "{e}");
    let (scene, import) = load_gltf_slice(&chain(MAX_HIERARCHY_DEPTH), None).unwrap();
    // 1023 translations of 1 mm lift the triangle (y = 3 locally) to y = 4.023. Query on a
    // thread with a 1 MiB stack, half the default for test threads: the traversal
    // recurses once per level and must fit.
    let hit = std::thread::Builder::new()
        .stack_size(1 << 20)
        .spawn(move || {
            let mut seg = LineSegmentIntersector::new(
                DVec3::new(0.0, 10.0, -0.5),
                DVec3::new(0.0, 0.0, -0.5),
            )
            .unwrap();
            IntersectionVisitor::new()
                .apply(&scene, import.root, &mut seg)
                .unwrap();
            seg.intersections()
                .iter()
                .map(|h| h.world_point.y)
                .collect::<Vec<_>>()
        })
        .unwrap()
        .join()
        .unwrap();
    assert_eq!(hit.len(), 1);
    assert!((hit[0] - 4.023).abs() < 1e-9, "{hit:?}");
}

#[test]
fn a_failed_import_keeps_an_earlier_one_queryable() {
    let mut s = SceneGraph::new();
    let first = import_gltf(&mut s, &gltf_with_vertices(&STACK[..9], 4, ""), None).unwrap();
    let before = (s.node_count(), s.drawable_count());
    for bad in [
        chain(MAX_HIERARCHY_DEPTH + 1),
        b"glTF\x02\0\0\0".to_vec(),
        br#"{"asset": {"version": "2.0"}, "buffers": [{"byteLength": 4, "uri": "%FF"}]}"#.to_vec(),
    ] {
        assert!(import_gltf(&mut s, &bad, None).is_err());
        assert_eq!((s.node_count(), s.drawable_count()), before);
    }
    let mut seg = LineSegmentIntersector::new(DVec3::new(0.0, 5.0, 0.0), DVec3::ZERO).unwrap();
    IntersectionVisitor::new()
        .apply(&s, first.root, &mut seg)
        .unwrap();
    assert_eq!(seg.intersections().len(), 1);
}

#[test]
fn glb_header_length_shorter_than_the_header_is_an_error() {
    // gltf 1.4 subtracts the 12-byte header size from the claimed total length without
    // checking; with overflow checks on (debug builds, fuzzers) that panics.
    let tri = f32s(&[0.0, 0.0, 0.0, 1.0, 0.0, 0.0, 0.0, 1.0, 0.0]);
    for claim in [0, 1, 11] {
        let e = fails_fast(
            &glb(&glb_json(36, 3), &tri, Some(claim), None),
            "short header",
        );
        assert!(matches!(e, LoadError::Gltf(_)), "{claim}: {e}");
    }
}

#[test]
fn planes_whose_normal_length_underflows_or_overflows_are_refused_at_construction() {
    // Found by the query fuzzer: (4.1e-322, 0, 0) is not the zero vector, but its
    // length underflows to 0, and (1e300, 1e300, 0) has an infinite length; the
    // polytope was accepted and every query with it failed with a misleading
    // SingularFrame("MODEL").
    assert!(matches!(
        Polytope::new([DVec4::new(4.1e-322, 0.0, 0.0, 0.0)]),
        Err(QueryError::ZeroNormal(0))
    ));
    assert!(Polytope::new([DVec4::new(1e300, 1e300, 0.0, 0.0)]).is_err());
    // Small but normal components are fine: 1e-150 squared is 1e-300.
    assert!(Polytope::new([DVec4::new(1e-150, 0.0, 0.0, 0.0)]).is_ok());
}
