//! Random edits between random queries: bounds and acceleration structures must never be
//! stale. A scene is built (the query target's scenes, plus Switch and LOD nodes over
//! their nodes) and queried, so that its bounds, scene index, world tree and primitive
//! trees exist; then it is edited step by step: a transform moved or made absolute, a
//! node mask changed, a vertex moved, a child linked or unlinked, a drawable added to a
//! geode, a primitive set dropped (those two in place, the index refitted, or through
//! `geometry_mut`, the index refitted at its next use), a node removed, a Switch child
//! toggled. After each step every query is answered again, plain and accelerated, alone
//! and together in an [`IntersectorGroup`], under the step's traversal and override
//! masks, LOD selection (the most detailed child, or an eye point) and frame (MODEL, or
//! VIEW under a view matrix), and all must agree exactly; while the scene stays "tame"
//! (grid vertices, simple transforms) the plain answer in MODEL coordinates, under the
//! step's masks and LOD selection, must also agree with the brute-force reference of
//! `tests/support/reference.rs`, computed from the edited scene from scratch.
#![no_main]

use arbitrary::Arbitrary;
use glam::{DMat4, DVec3, Vec3};
use libfuzzer_sys::fuzz_target;
use scene_intersect::drawable::Geometry;
use scene_intersect::graph::{NodeId, NodeKind, ReferenceFrame, SceneGraph};
use scene_intersect::intersectors::{
    AnyIntersector, IntersectorGroup, LineSegmentIntersector, Polytope, PolytopeIntersector,
    SphereIntersector,
};
use scene_intersect::visitor::{CoordinateFrame, IntersectionLimit, Intersector, LodSelection};

#[path = "../../tests/support/reference.rs"]
mod reference;
mod scene_spec;

use reference::{Query, WholeVisits};
use scene_spec::{
    build_query, build_scene, xform, BuiltScene, GeometrySpec, NodeSpec, QuerySpec, VertexSpec,
    Xform,
};

/// One edit; nodes and geometries are named by their place in the built scene (taken
/// modulo the number there).
#[derive(Arbitrary, Debug)]
enum EditSpec {
    /// Set a node's matrix (refused unless it is a transform and the matrix is affine).
    Move { node: u8, xform: Xform },
    /// Set a node's mask (bits 0 to 7).
    Mask { node: u8, mask: u8 },
    /// Move one vertex of a geometry (`vertex` modulo their number): through
    /// `geometry_mut` (the index refitted at its next use) when `vertex` is below 128,
    /// `edit_geometry` (the scene index refitted, the geometry's instances detached)
    /// below 192, and `edit_vertices` (the geometry's own tree refitted too) from 192.
    /// (No field of its own: the saved inputs of `fuzz/regressions/edits` keep decoding
    /// to the same edits.)
    Vertex {
        geometry: u8,
        vertex: u8,
        to: VertexSpec,
    },
    /// Put a node under another (refused for cycles, duplicates and non-groups).
    Link { parent: u8, child: u8 },
    /// Take a node from under its parent (refused when it is not a child there).
    Unlink { parent: u8, child: u8 },
    /// Put a geometry in a geode (refused unless a geode, or when already there).
    AddDrawable { geode: u8, geometry: u8 },
    /// Drop one primitive set of a geometry (`set` modulo their number; through
    /// `edit_geometry` when `set` is 128 or more, as for `Vertex`).
    DropSet { geometry: u8, set: u8 },
    /// Remove a node from the graph; later edits naming it are refused. The root is
    /// never removed: naming it rebuilds the acceleration structures instead
    /// (`rebuild_acceleration`, which puts the instances earlier edits detached back
    /// into the world tree). (No variant of its own, as for `Vertex`.)
    Remove { node: u8 },
    /// Turn a Switch's child on or off (refused unless a Switch with that child).
    Toggle { switch: u8, child: u8, on: bool },
    /// Make a transform absolute (its matrix is the world matrix) or relative again.
    Frame { node: u8, absolute: bool },
}

/// A Switch or LOD node added to the built scene: under `parent`, over existing nodes
/// (each link may be refused: cycles, geodes as parents, duplicates).
#[derive(Arbitrary, Debug)]
enum LevelSpec {
    /// Children with their enabled flags.
    Switch {
        parent: u8,
        children: Vec<(u8, bool)>,
    },
    /// Children with their `[min, max)` eye-distance ranges (in units of 1/2, a max of
    /// 255 meaning unbounded), around a grid centre or the node's bound's centre.
    Lod {
        parent: u8,
        center: Option<[i8; 3]>,
        children: Vec<(u8, u8, u8)>,
    },
}

#[derive(Arbitrary, Debug)]
struct Step {
    edit: EditSpec,
    /// The visitor's traversal mask for this step's queries (bits 0 to 7, and the rest
    /// set when the top bit is).
    traversal_mask: u8,
    /// The LOD children the visitor enters: the most detailed, or those in range of an
    /// eye at this grid point.
    eye: Option<[i8; 3]>,
    /// The visitor's override mask (bits 0 to 7).
    override_mask: u8,
    /// When set, the queries are given in VIEW coordinates, under this view matrix.
    view: Option<Xform>,
}

#[derive(Arbitrary, Debug)]
struct Input {
    nodes: Vec<NodeSpec>,
    geometries: Vec<GeometrySpec>,
    levels: Vec<LevelSpec>,
    queries: Vec<QuerySpec>,
    steps: Vec<Step>,
}

/// How a step's queries are given and its visitor set up.
#[derive(Clone, Copy)]
struct Visiting {
    /// The visitor's masks and LOD selection.
    traversal: reference::Traversal,
    /// Queries in VIEW coordinates under this view matrix; in MODEL ones without.
    view: Option<DMat4>,
}

impl Visiting {
    /// MODEL queries, every node mask, the most detailed LOD child.
    const DEFAULT: Visiting = Visiting {
        traversal: reference::Traversal::DEFAULT,
        view: None,
    };

    fn frame(&self) -> CoordinateFrame {
        if self.view.is_some() {
            CoordinateFrame::View
        } else {
            CoordinateFrame::Model
        }
    }
}

/// `query` as an intersector under `limit`, in the frame `visiting` gives.
fn intersector(query: &Query, limit: IntersectionLimit, visiting: Visiting) -> AnyIntersector {
    let frame = visiting.frame();
    match query {
        Query::Segment(a, b) => LineSegmentIntersector::with_frame(frame, *a, *b)
            .expect("a valid segment")
            .with_limit(limit)
            .into(),
        Query::Polytope(planes) => {
            let polytope = Polytope::new(planes.iter().copied()).expect("a valid polytope");
            PolytopeIntersector::with_frame(frame, polytope)
                .with_limit(limit)
                .into()
        }
        Query::Sphere(c, r) => SphereIntersector::with_frame(frame, *c, *r)
            .expect("a valid sphere")
            .with_limit(limit)
            .into(),
    }
}

/// A member's hits as `Debug` text (so that a NaN or a −0 must match too).
fn hits(member: &AnyIntersector) -> String {
    match member {
        AnyIntersector::LineSegment(i) => format!("{:?}", i.intersections()),
        AnyIntersector::Polytope(i) => format!("{:?}", i.intersections()),
        AnyIntersector::Sphere(i) => format!("{:?}", i.intersections()),
    }
}

/// Answers `intersector` as `visiting` says, plain or accelerated; the error, as text,
/// when the visitor refuses it (a view matrix it cannot invert).
fn answer<I: Intersector>(
    built: &BuiltScene,
    mut intersector: I,
    visiting: Visiting,
    accelerated: bool,
) -> Result<I, String> {
    let mut visitor = visiting.traversal.visitor(accelerated);
    if let Some(view) = visiting.view {
        visitor.set_view_matrix(view);
    }
    match visitor.apply(&built.scene, built.root, &mut intersector) {
        Ok(()) => Ok(intersector),
        Err(e) => {
            assert!(
                visiting.view.is_some(),
                "a valid MODEL query on a valid root was refused: {e}"
            );
            Err(e.to_string())
        }
    }
}

/// The node of `nodes` that `k` names (modulo their number).
fn pick(nodes: &[NodeId], k: u8) -> NodeId {
    nodes[k as usize % nodes.len()]
}

/// Whether `id` is a transform of `scene`.
fn is_transform(scene: &SceneGraph, id: NodeId) -> bool {
    matches!(
        scene.node(id).map(|n| n.kind()),
        Some(NodeKind::Transform(_))
    )
}

/// Applies `edit`; returns whether the scene stays within what the reference models
/// with its tolerance (grid vertices, simple transforms, default masks).
fn apply_edit(built: &mut BuiltScene, edit: &EditSpec) -> bool {
    let scene = &mut built.scene;
    match edit {
        EditSpec::Move { node, xform: x } => {
            let id = pick(&built.nodes, *node);
            let (m, tame) = xform(x);
            let is_transform = is_transform(scene, id);
            match scene.set_matrix(id, m) {
                Ok(()) => {
                    assert!(
                        is_transform,
                        "a matrix was set on a node that is no transform"
                    );
                    tame
                }
                // Not a transform (or removed), or not finite (`xform` makes every finite
                // matrix affine).
                Err(_) => {
                    assert!(
                        !is_transform || !m.is_finite(),
                        "a finite affine matrix was refused"
                    );
                    true
                }
            }
        }
        EditSpec::Mask { node, mask } => {
            let id = pick(&built.nodes, *node);
            // Refused only for a removed node.
            if scene.set_node_mask(id, u32::from(*mask)).is_err() {
                assert!(
                    scene.node(id).is_none(),
                    "a mask refused on a node of the scene"
                );
            }
            true
        }
        EditSpec::Vertex {
            geometry,
            vertex,
            to,
        } => {
            if built.drawables.is_empty() {
                return true;
            }
            let d = built.drawables[*geometry as usize % built.drawables.len()];
            let (v, tame) = match to {
                VertexSpec::Grid(g) => (
                    Vec3::new(f32::from(g[0]), f32::from(g[1]), f32::from(g[2])),
                    true,
                ),
                VertexSpec::Raw(r) => (Vec3::from_array(*r), false),
            };
            let set = |vertices: &mut [Vec3]| {
                if !vertices.is_empty() {
                    let n = vertices.len();
                    vertices[*vertex as usize % n] = v;
                }
            };
            match *vertex {
                0..=127 => set(scene
                    .geometry_mut(d)
                    .expect("a geometry of the scene")
                    .vertices_mut()),
                128..=191 => scene
                    .edit_geometry(d, |g| set(g.vertices_mut()))
                    .expect("a geometry of the scene"),
                _ => scene
                    .edit_vertices(d, set)
                    .expect("a geometry of the scene"),
            }
            tame
        }
        EditSpec::Link { parent, child } => {
            let (p, c) = (pick(&built.nodes, *parent), pick(&built.nodes, *child));
            // Refused for cycles, duplicates and geodes; either way nothing must break.
            let _ = scene.add_child(p, c);
            true
        }
        EditSpec::Unlink { parent, child } => {
            let (p, c) = (pick(&built.nodes, *parent), pick(&built.nodes, *child));
            let _ = scene.remove_child(p, c);
            true
        }
        EditSpec::AddDrawable { geode, geometry } => {
            if let Some(&d) = built
                .drawables
                .get(*geometry as usize % built.drawables.len().max(1))
            {
                let _ = scene.add_drawable_to_geode(pick(&built.nodes, *geode), d);
            }
            true
        }
        EditSpec::DropSet { geometry, set } => {
            if let Some(&d) = built
                .drawables
                .get(*geometry as usize % built.drawables.len().max(1))
            {
                let drop = |g: &mut Geometry| {
                    let n = g.primitive_sets().len();
                    if n > 0 {
                        assert!(g.remove_primitive_set(*set as usize % n).is_some());
                    }
                };
                if *set >= 128 {
                    scene
                        .edit_geometry(d, drop)
                        .expect("a geometry of the scene");
                } else {
                    drop(scene.geometry_mut(d).expect("a geometry of the scene"));
                }
            }
            true
        }
        EditSpec::Toggle { switch, child, on } => {
            let _ = scene.set_switch_child(pick(&built.nodes, *switch), *child as usize % 4, *on);
            true
        }
        EditSpec::Frame { node, absolute } => {
            let frame = if *absolute {
                ReferenceFrame::Absolute
            } else {
                ReferenceFrame::Relative
            };
            let id = pick(&built.nodes, *node);
            let is_transform = is_transform(scene, id);
            assert_eq!(scene.set_reference_frame(id, frame).is_ok(), is_transform);
            true
        }
        EditSpec::Remove { node } => {
            let id = pick(&built.nodes, *node);
            if id == built.root {
                scene.rebuild_acceleration();
            } else {
                let _ = scene.remove_node(id);
            }
            true
        }
    }
}

/// Adds the Switch and LOD nodes of `levels` (at most 3) to the scene.
fn add_levels(built: &mut BuiltScene, levels: &[LevelSpec]) {
    for level in levels.iter().take(3) {
        let scene = &mut built.scene;
        let id = match level {
            LevelSpec::Switch { parent, children } => {
                let id = scene.add_switch("switch");
                for &(child, on) in children.iter().take(4) {
                    let c = pick(&built.nodes, child);
                    if scene.add_child(id, c).is_ok() {
                        let n = scene.node(id).map_or(0, |n| n.children().len());
                        scene
                            .set_switch_child(id, n - 1, on)
                            .expect("the child just added");
                    }
                }
                let _ = scene.add_child(pick(&built.nodes, *parent), id);
                id
            }
            LevelSpec::Lod {
                parent,
                center,
                children,
            } => {
                let center =
                    center.map(|g| DVec3::new(f64::from(g[0]), f64::from(g[1]), f64::from(g[2])));
                let id = scene.add_lod("lod", center).expect("a finite centre");
                for &(child, min, max) in children.iter().take(4) {
                    let min = f64::from(min) * 0.5;
                    let max = if max == u8::MAX {
                        f64::INFINITY
                    } else {
                        f64::from(max) * 0.5
                    };
                    let c = pick(&built.nodes, child);
                    let result = scene.add_lod_child(id, c, min, max);
                    if min > max {
                        assert!(result.is_err(), "an empty range was accepted");
                    }
                }
                let _ = scene.add_child(pick(&built.nodes, *parent), id);
                id
            }
        };
        built.nodes.push(id);
    }
}

fuzz_target!(|input: Input| {
    let mut built = build_scene(&input.nodes, &input.geometries);
    let mut tame = built.tame;
    add_levels(&mut built, &input.levels);
    let queries: Vec<(Query, bool)> = input
        .queries
        .iter()
        .take(3)
        .filter_map(|spec| match build_query(spec) {
            (Some(q), tame_query) => Some((q, tame_query)),
            (None, _) => None,
        })
        .collect();
    if queries.is_empty() {
        return;
    }
    // Build every cache the edits must then keep fresh.
    for (query, _) in &queries {
        let single = intersector(query, IntersectionLimit::None, Visiting::DEFAULT);
        answer(&built, single, Visiting::DEFAULT, true).expect("a MODEL query");
    }
    for step in input.steps.iter().take(6) {
        tame &= apply_edit(&mut built, &step.edit);
        let high = if step.traversal_mask & 0x80 != 0 {
            !0xff
        } else {
            0
        };
        let visiting = Visiting {
            traversal: reference::Traversal {
                traversal_mask: u32::from(step.traversal_mask) | high,
                override_mask: u32::from(step.override_mask),
                lod: step.eye.map_or(LodSelection::HighestDetail, |g| {
                    LodSelection::EyePoint(DVec3::new(
                        f64::from(g[0]),
                        f64::from(g[1]),
                        f64::from(g[2]),
                    ))
                }),
            },
            view: step.view.as_ref().map(|x| xform(x).0),
        };
        for limit in [
            IntersectionLimit::None,
            IntersectionLimit::Nearest,
            IntersectionLimit::OnePerDrawable,
        ] {
            let mut group = IntersectorGroup::new();
            let mut plain_answers = Vec::new();
            for (query, _) in &queries {
                let single = intersector(query, limit, visiting);
                group.push(single.clone());
                let plain = answer(&built, single.clone(), visiting, false).map(|i| hits(&i));
                let accelerated = answer(&built, single.clone(), visiting, true).map(|i| hits(&i));
                assert_eq!(
                    accelerated, plain,
                    "accelerated and plain answers differ after {:?} ({limit:?})",
                    step.edit
                );
                // As a custom intersector is answered: every instance visited whole,
                // from the tree over the instances and the tree of detached ones.
                let whole = answer(&built, WholeVisits::new(single), visiting, true)
                    .map(|w| hits(&w.inner));
                assert_eq!(
                    whole, plain,
                    "whole visits and plain answers differ after {:?} ({limit:?})",
                    step.edit
                );
                plain_answers.push(plain);
            }
            // The same queries as one group, in one traversal.
            for accelerated in [false, true] {
                match answer(&built, group.clone(), visiting, accelerated) {
                    Ok(group) => {
                        for (member, alone) in group.members().iter().zip(&plain_answers) {
                            assert_eq!(
                                Ok(hits(member)),
                                *alone,
                                "a group member (accelerated: {accelerated}) answers otherwise \
                                 than alone after {:?} ({limit:?})",
                                step.edit
                            );
                        }
                    }
                    // Refused as a whole when any member is.
                    Err(e) => assert!(
                        plain_answers.iter().any(|a| a.is_err()),
                        "a group was refused ({e}) where none of its members is"
                    ),
                }
            }
        }
        // The plain traversal in MODEL coordinates under the step's masks and LOD
        // selection, against the reference computed from the edited scene from scratch.
        let traversal = visiting.traversal;
        for (query, tame_query) in &queries {
            if tame && *tame_query {
                let (scene, root) = (&built.scene, built.root);
                let all =
                    reference::run_plain(scene, root, query, IntersectionLimit::None, &traversal)
                        .expect("a valid query on a valid root");
                let margin = match query {
                    Query::Segment(..) => 1e-7,
                    _ => 1e-6,
                };
                let checked = reference::check_under(
                    scene,
                    root,
                    query,
                    &all,
                    margin,
                    f64::INFINITY,
                    &traversal,
                );
                if let Err(e) = checked {
                    panic!("disagreement with the reference after {:?}: {e}", step.edit);
                }
            }
        }
    }
});
