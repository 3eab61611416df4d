//! The random scenes and queries the fuzz targets share: specifications decoded by
//! `arbitrary`, and their construction, which checks that the library refuses exactly
//! the invalid parts. (Moved here from `query.rs`, the types unchanged, so that inputs
//! saved for that target decode as before.)

use arbitrary::Arbitrary;
use glam::{DMat4, DQuat, DVec3, DVec4, Vec3};
use scene_intersect::drawable::{Geometry, Indices, PrimitiveMode, PrimitiveSet};
use scene_intersect::graph::{DrawableId, GraphError, NodeId, NodeKind, SceneGraph};
use scene_intersect::intersectors::{LineSegmentIntersector, Polytope, SphereIntersector};

use crate::reference::Query;

/// Scale factors a transform may use: 0 makes a singular transform.
const SCALES: [f64; 7] = [1.0, 2.0, 0.5, -1.0, 0.0, 1e-3, 1e3];

#[derive(Arbitrary, Debug)]
pub enum Xform {
    Translate([i8; 3]),
    Scale([u8; 3]),
    /// A rotation about a grid axis by a multiple of 15 degrees.
    Rotate([i8; 3], u8),
    /// Any matrix at all, NaN and infinities included. Its last row is replaced by
    /// `(0, 0, 0, 1)` (scene transforms must be affine) once the original has been
    /// checked to be refused when projective and made affine when a rounding away.
    Raw([f64; 16]),
}

#[derive(Arbitrary, Debug)]
pub enum NodeSpec {
    Group {
        parent: u8,
    },
    Transform {
        parent: u8,
        xform: Xform,
    },
    Geode {
        parent: u8,
        geometries: Vec<u8>,
    },
    /// Also put an existing node under another parent (a DAG); may be refused.
    Share {
        parent: u8,
        child: u8,
    },
}

#[derive(Arbitrary, Debug)]
pub enum VertexSpec {
    Grid([i8; 3]),
    Raw([f32; 3]),
}

#[derive(Arbitrary, Debug)]
pub enum SetSpec {
    Arrays {
        mode: u8,
        first: u32,
        count: u32,
    },
    Lengths {
        mode: u8,
        first: u32,
        lengths: Vec<u32>,
    },
    U8 {
        mode: u8,
        indices: Vec<u8>,
    },
    U16 {
        mode: u8,
        indices: Vec<u16>,
    },
    U32 {
        mode: u8,
        indices: Vec<u32>,
    },
}

#[derive(Arbitrary, Debug)]
pub struct GeometrySpec {
    pub vertices: Vec<VertexSpec>,
    pub sets: Vec<SetSpec>,
}

#[derive(Arbitrary, Debug)]
pub enum PointSpec {
    /// A grid point offset by a quarter, so grid queries rarely graze grid geometry.
    Grid([i8; 3]),
    Raw([f64; 3]),
}

#[derive(Arbitrary, Debug)]
pub enum QuerySpec {
    Segment(PointSpec, PointSpec),
    Box {
        min: [i8; 3],
        size: [u8; 3],
        turn: u8,
    },
    Planes(Vec<[f64; 4]>),
    Sphere(PointSpec, u8),
    RawSphere([f64; 3], f64),
}

fn point(p: &PointSpec) -> (DVec3, bool) {
    match p {
        PointSpec::Grid(g) => (
            DVec3::new(f64::from(g[0]), f64::from(g[1]), f64::from(g[2])) + 0.25,
            true,
        ),
        PointSpec::Raw(r) => (DVec3::from_array(*r), false),
    }
}

pub fn xform(x: &Xform) -> (DMat4, bool) {
    match x {
        Xform::Translate(t) => (
            DMat4::from_translation(DVec3::new(
                f64::from(t[0]),
                f64::from(t[1]),
                f64::from(t[2]),
            )),
            true,
        ),
        Xform::Scale(s) => {
            let f = s.map(|k| SCALES[k as usize % SCALES.len()]);
            // Extreme scales are fuzzed for panics, but too ill-conditioned for the
            // reference's tolerance band.
            let tame = f
                .iter()
                .all(|x| x.abs() <= 2.0 && (*x == 0.0 || x.abs() >= 0.5));
            (DMat4::from_scale(DVec3::from_array(f)), tame)
        }
        Xform::Rotate(axis, k) => {
            let a = DVec3::new(f64::from(axis[0]), f64::from(axis[1]), f64::from(axis[2]));
            let angle = f64::from(*k % 24) * 15f64.to_radians();
            let q = a
                .try_normalize()
                .map_or(DQuat::IDENTITY, |a| DQuat::from_axis_angle(a, angle));
            (DMat4::from_quat(q), true)
        }
        Xform::Raw(m) => {
            let raw = DMat4::from_cols_array(m);
            let mut affine = raw;
            affine.x_axis.w = 0.0;
            affine.y_axis.w = 0.0;
            affine.z_axis.w = 0.0;
            affine.w_axis.w = 1.0;
            if raw.is_finite() {
                // Within 1e-9 of affine: rounding, taken as the affine matrix.
                let projective = (raw.row(3) - DVec4::W).abs().max_element() > 1e-9;
                let mut scene = SceneGraph::new();
                match scene.add_transform("raw", raw) {
                    Err(GraphError::NonAffineMatrix { .. }) => assert!(projective),
                    Ok(id) => {
                        assert!(!projective, "a projective matrix was accepted");
                        let kept = scene.node(id).and_then(|n| n.transform()).map(|t| t.matrix);
                        assert_eq!(kept, Some(affine));
                    }
                    Err(e) => panic!("a finite matrix refused: {e}"),
                }
            }
            (affine, false)
        }
    }
}

/// Whether the set reads past `n` vertices, worked out independently of the library.
fn reads_past(set: &PrimitiveSet, n: usize) -> bool {
    let n = n as u64;
    match set {
        PrimitiveSet::DrawArrays { first, count, .. } => {
            *count > 0 && u64::from(*first) + u64::from(*count) > n
        }
        PrimitiveSet::DrawArrayLengths { first, lengths, .. } => {
            let total: u64 = lengths.iter().map(|&l| u64::from(l)).sum();
            total > 0 && u64::from(*first) + total > n
        }
        PrimitiveSet::DrawElements { indices, .. } => {
            (0..indices.len()).any(|i| u64::from(indices.get(i).unwrap_or(0)) >= n)
        }
    }
}

fn build_geometry(spec: &GeometrySpec) -> (Geometry, bool) {
    let mut tame = true;
    let vertices: Vec<Vec3> = spec
        .vertices
        .iter()
        .take(32)
        .map(|v| match v {
            VertexSpec::Grid(g) => Vec3::new(f32::from(g[0]), f32::from(g[1]), f32::from(g[2])),
            VertexSpec::Raw(r) => {
                tame = false;
                Vec3::from_array(*r)
            }
        })
        .collect();
    let mut geometry = Geometry::new(vertices);
    let mode = |m: &u8| PrimitiveMode::ALL[*m as usize % PrimitiveMode::ALL.len()];
    for s in spec.sets.iter().take(4) {
        let set = match s {
            SetSpec::Arrays {
                mode: m,
                first,
                count,
            } => PrimitiveSet::draw_arrays(mode(m), *first, *count),
            SetSpec::Lengths {
                mode: m,
                first,
                lengths,
            } => PrimitiveSet::DrawArrayLengths {
                mode: mode(m),
                first: *first,
                lengths: lengths.iter().take(8).copied().collect(),
            },
            SetSpec::U8 { mode: m, indices } => PrimitiveSet::DrawElements {
                mode: mode(m),
                indices: Indices::U8(indices.iter().take(64).copied().collect()),
            },
            SetSpec::U16 { mode: m, indices } => PrimitiveSet::DrawElements {
                mode: mode(m),
                indices: Indices::U16(indices.iter().take(64).copied().collect()),
            },
            SetSpec::U32 { mode: m, indices } => PrimitiveSet::DrawElements {
                mode: mode(m),
                indices: Indices::U32(indices.iter().take(64).copied().collect()),
            },
        };
        let invalid = reads_past(&set, geometry.vertices().len());
        let result = geometry.add_primitive_set(set);
        assert_eq!(result.is_err(), invalid, "{result:?}");
    }
    (geometry, tame)
}

/// A scene built from its specification, with what edits need to name its parts.
pub struct BuiltScene {
    pub scene: SceneGraph,
    pub root: NodeId,
    /// Grid vertices and simple transforms only: the reference's tolerance holds.
    pub tame: bool,
    /// The root, then every node added, in order (for the edits target).
    #[allow(dead_code, reason = "the query target does not edit")]
    pub nodes: Vec<NodeId>,
    /// Every drawable, in order (for the edits target).
    #[allow(dead_code, reason = "the query target does not edit")]
    pub drawables: Vec<DrawableId>,
}

/// Builds the scene of `nodes` (at most 12) and `geometries` (at most 4) under a root
/// group, checking that construction refuses exactly what is invalid.
pub fn build_scene(node_specs: &[NodeSpec], geometries: &[GeometrySpec]) -> BuiltScene {
    let mut scene = SceneGraph::new();
    let root = scene.add_group("root");
    let mut tame = true;
    let mut drawables = Vec::new();
    for (i, g) in geometries.iter().take(4).enumerate() {
        let (geometry, t) = build_geometry(g);
        tame &= t;
        drawables.push(scene.add_drawable(format!("g{i}"), geometry));
    }
    let mut nodes = vec![root];
    let parent_of = |scene: &SceneGraph, nodes: &[NodeId], p: u8| {
        let id = nodes[p as usize % nodes.len()];
        match scene.node(id).map(|n| n.kind()) {
            Some(NodeKind::Geode { .. }) => root,
            _ => id,
        }
    };
    for spec in node_specs.iter().take(12) {
        match spec {
            NodeSpec::Group { parent } => {
                let p = parent_of(&scene, &nodes, *parent);
                let g = scene.add_group("g");
                scene.add_child(p, g).expect("a new node under a group");
                nodes.push(g);
            }
            NodeSpec::Transform { parent, xform: x } => {
                let p = parent_of(&scene, &nodes, *parent);
                let (m, t) = xform(x);
                match scene.add_transform("t", m) {
                    Ok(id) => {
                        tame &= t;
                        scene.add_child(p, id).expect("a new node under a group");
                        nodes.push(id);
                    }
                    Err(_) => assert!(!m.is_finite(), "a finite matrix was refused"),
                }
            }
            NodeSpec::Geode { parent, geometries } => {
                let p = parent_of(&scene, &nodes, *parent);
                let geode = scene.add_geode("geode");
                scene.add_child(p, geode).expect("a new node under a group");
                if !drawables.is_empty() {
                    let mut chosen: Vec<usize> = geometries
                        .iter()
                        .take(4)
                        .map(|g| *g as usize % drawables.len())
                        .collect();
                    chosen.sort_unstable();
                    chosen.dedup();
                    for d in chosen {
                        scene
                            .add_drawable_to_geode(geode, drawables[d])
                            .expect("a drawable once per geode");
                    }
                }
                nodes.push(geode);
            }
            NodeSpec::Share { parent, child } => {
                let p = parent_of(&scene, &nodes, *parent);
                let c = nodes[*child as usize % nodes.len()];
                // Refused for cycles and duplicates; either way nothing must break.
                let _ = scene.add_child(p, c);
            }
        }
    }
    BuiltScene {
        scene,
        root,
        tame,
        nodes,
        drawables,
    }
}

pub fn build_query(spec: &QuerySpec) -> (Option<Query>, bool) {
    match spec {
        QuerySpec::Segment(a, b) => {
            let ((a, ta), (b, tb)) = (point(a), point(b));
            let ok = LineSegmentIntersector::new(a, b).is_ok();
            assert_eq!(ok, a.is_finite() && b.is_finite() && a != b);
            (ok.then_some(Query::Segment(a, b)), ta && tb)
        }
        QuerySpec::Box { min, size, turn } => {
            let min = DVec3::new(f64::from(min[0]), f64::from(min[1]), f64::from(min[2])) + 0.25;
            let half = DVec3::new(f64::from(size[0]), f64::from(size[1]), f64::from(size[2]))
                * 0.125
                + 0.125;
            let rotation = DQuat::from_rotation_y(f64::from(*turn % 24) * 15f64.to_radians());
            let p = Polytope::from_oriented_box(min + half, half, rotation)
                .expect("a finite box with positive half extents");
            (Some(Query::Polytope(p.planes().to_vec())), true)
        }
        QuerySpec::Planes(planes) => {
            let planes: Vec<DVec4> = planes
                .iter()
                .take(70)
                .map(|p| DVec4::from_array(*p))
                .collect();
            let valid = !planes.is_empty()
                && planes.len() <= scene_intersect::intersectors::MAX_PLANES
                && planes.iter().all(|p| {
                    p.is_finite()
                        && p.truncate().length() > 0.0
                        && p.truncate().length().is_finite()
                });
            let ok = Polytope::new(planes.iter().copied()).is_ok();
            assert_eq!(ok, valid);
            (ok.then_some(Query::Polytope(planes)), false)
        }
        QuerySpec::Sphere(c, r) => {
            let (c, t) = point(c);
            let r = f64::from(*r) * 0.125;
            let ok = SphereIntersector::new(c, r).is_ok();
            assert_eq!(ok, c.is_finite());
            (ok.then_some(Query::Sphere(c, r)), t)
        }
        QuerySpec::RawSphere(c, r) => {
            let c = DVec3::from_array(*c);
            let ok = SphereIntersector::new(c, *r).is_ok();
            if !(c.is_finite() && r.is_finite() && *r >= 0.0) {
                assert!(!ok, "a non-finite or negative sphere was accepted");
            }
            (ok.then_some(Query::Sphere(c, *r)), false)
        }
    }
}
