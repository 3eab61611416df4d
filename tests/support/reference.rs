//! A brute-force reference for the three intersectors, shared by `tests/properties.rs`
//! and the `query` and `edits` fuzz targets (which include this file by path).
//!
//! The reference knows nothing of the visitor's code, culling or local frames: it walks
//! every node path from the root that the visitor's settings let through (node masks,
//! Switch and LOD nodes, as a [`Traversal`] gives them), takes the path's matrix from
//! [`SceneGraph::local_to_world`],
//! moves every primitive's vertices to world space and tests them there, in `f64`, with
//! its own formulas (Möller–Trumbore for segments, Ericson's closest point for spheres,
//! Sutherland–Hodgman for polytopes).
//!
//! Floating point makes a contact exactly on a boundary (a segment through an edge, a
//! ball touching a vertex) undecidable by two different formulas, so the reference gives
//! a [`Verdict`] with a tolerance band: `Hit` when the primitive is hit even after
//! shrinking everything by `margin`, `Miss` when it is missed even after growing
//! everything by `margin`, `Unsure` in between. [`check`] then asserts that the library
//! found every `Hit` and no `Miss`.
//!
//! Every code path that answers queries is listed in [`CODE_PATHS`] (plain, accelerated,
//! both batch APIs, summaries, whole visits), each taking the visitor's settings: a new
//! one added there is held to every property.
#![allow(dead_code)]

use std::collections::{BTreeMap, HashMap};

use glam::{DMat4, DVec3, DVec4, Vec3};
use scene_intersect::drawable::{Geometry, PrimitiveFunctor};
use scene_intersect::graph::{DrawableId, NodeId, NodeKind, SceneGraph};
use scene_intersect::intersectors::{
    AnyIntersector, HitRecords, LineSegmentIntersector, Polytope, PolytopeIntersector,
    PrimitiveKind, QueryError, SphereIntersector, VolumeHitSummaries,
};
use scene_intersect::visitor::{IntersectionLimit, IntersectionVisitor, LodSelection};

#[path = "whole_visits.rs"]
mod whole_visits;
pub use whole_visits::WholeVisits;

/// A world-space query.
#[derive(Clone, Debug)]
pub enum Query {
    /// A closed segment from the first point to the second.
    Segment(DVec3, DVec3),
    /// A polytope given by its inward planes.
    Polytope(Vec<DVec4>),
    /// A closed ball: centre and radius.
    Sphere(DVec3, f64),
}

/// Identifies one primitive visit: node path, drawable, primitive index.
pub type PrimKey = (Vec<NodeId>, DrawableId, u32);

/// One hit, whatever intersector found it.
#[derive(Clone, Debug, PartialEq)]
pub struct Hit {
    /// Node path, drawable and primitive index.
    pub key: PrimKey,
    /// The order key: ratio for segments, distance for polytopes and spheres.
    pub order: f64,
    /// The world point of the hit.
    pub point: DVec3,
    /// For polytope hits, the clipped polygon (world space); empty otherwise.
    pub polygon: Vec<DVec3>,
}

/// A way of answering a query, with a visitor set as the [`Traversal`] says.
pub type QueryFn =
    fn(&SceneGraph, NodeId, &Query, IntersectionLimit, &Traversal) -> Result<Vec<Hit>, QueryError>;

/// Every code path the properties check: the plain traversal, the accelerated one
/// (scene index + primitive BVHs), the two parallel batch APIs, the accelerated one
/// answering with summaries, and the accelerated one answering as for a custom
/// intersector.
pub const CODE_PATHS: &[(&str, QueryFn)] = &[
    ("plain visitor", run_plain),
    ("accelerated visitor", run_accelerated),
    ("parallel batch", run_batch),
    ("mapped batch", run_mapped),
    ("summaries", run_summarized),
    ("whole visits", run_whole),
];

/// Answers `query` with a new plain [`IntersectionVisitor`] (no acceleration).
pub fn run_query(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
) -> Result<Vec<Hit>, QueryError> {
    run_plain(scene, root, query, limit, &Traversal::DEFAULT)
}

/// Answers `query` with a new accelerated [`IntersectionVisitor`] (the default).
pub fn run_query_accelerated(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
) -> Result<Vec<Hit>, QueryError> {
    run_accelerated(scene, root, query, limit, &Traversal::DEFAULT)
}

/// Answers `query` with the plain [`IntersectionVisitor`] (no acceleration).
pub fn run_plain(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
    traversal: &Traversal,
) -> Result<Vec<Hit>, QueryError> {
    run_alone(scene, root, query, limit, traversal.visitor(false))
}

/// Answers `query` with the accelerated [`IntersectionVisitor`].
pub fn run_accelerated(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
    traversal: &Traversal,
) -> Result<Vec<Hit>, QueryError> {
    run_alone(scene, root, query, limit, traversal.visitor(true))
}

/// Answers `query` with the accelerated [`IntersectionVisitor`] as it answers custom
/// intersectors, which leave the world tree to it: through [`WholeVisits`], every
/// instance is visited whole, from the tree over the instances and the tree of those
/// detached by moves and edits.
pub fn run_whole(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
    traversal: &Traversal,
) -> Result<Vec<Hit>, QueryError> {
    let mut visitor = traversal.visitor(true);
    answer(query, limit, |i| {
        let mut whole = WholeVisits::new(i.clone());
        visitor.apply(scene, root, &mut whole)?;
        *i = whole.inner;
        Ok(())
    })
}

/// Answers `query` with `visitor`, one query at a time.
fn run_alone(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
    mut visitor: IntersectionVisitor,
) -> Result<Vec<Hit>, QueryError> {
    answer(query, limit, |i| visitor.apply(scene, root, i))
}

/// Answers `query` with the accelerated [`IntersectionVisitor`] three times, with full
/// records, with summaries only ([`HitRecords::Summaries`]) and with unsorted summaries
/// ([`HitRecords::UnsortedSummaries`]): the summaries must be the full records' hits
/// (key, order, world point, in order), the unsorted ones the same hits in any order;
/// the full records' hits are returned.
pub fn run_summarized(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
    traversal: &Traversal,
) -> Result<Vec<Hit>, QueryError> {
    let mut visitor = traversal.visitor(true);
    answer(query, limit, |i| {
        visitor.apply(scene, root, i)?;
        let mut summarize = |records| {
            let mut summarized = i.clone();
            match &mut summarized {
                AnyIntersector::LineSegment(s) => s.set_records(records),
                AnyIntersector::Polytope(s) => s.set_records(records),
                AnyIntersector::Sphere(s) => s.set_records(records),
            }
            visitor.apply(scene, root, &mut summarized)?;
            Ok::<_, QueryError>(summaries_of(&summarized))
        };
        let (summaries, mut unsorted) = (
            summarize(HitRecords::Summaries)?,
            summarize(HitRecords::UnsortedSummaries)?,
        );
        let without_polygons: Vec<Hit> = (hits_of(i).into_iter())
            .map(|h| Hit {
                polygon: Vec::new(),
                ..h
            })
            .collect();
        assert_eq!(
            summaries, without_polygons,
            "summaries and full records disagree"
        );
        let mut sorted = without_polygons;
        for hits in [&mut sorted, &mut unsorted] {
            hits.sort_by(|a, b| {
                let point = |h: &Hit| h.point.to_array().map(f64::to_bits);
                (a.order.total_cmp(&b.order))
                    .then_with(|| a.key.cmp(&b.key))
                    .then_with(|| point(a).cmp(&point(b)))
            });
        }
        assert_eq!(
            unsorted, sorted,
            "unsorted summaries and full records disagree"
        );
        Ok(())
    })
}

/// The summaries of an intersector answered with summaries only, as hits without
/// polygons.
fn summaries_of(i: &AnyIntersector) -> Vec<Hit> {
    fn hit(path: &[NodeId], drawable: DrawableId, primitive: u32, order: f64, point: DVec3) -> Hit {
        Hit {
            key: (path.to_vec(), drawable, primitive),
            order,
            point,
            polygon: Vec::new(),
        }
    }
    fn volume(summaries: VolumeHitSummaries<'_>) -> Vec<Hit> {
        (summaries)
            .map(|h| {
                hit(
                    h.node_path,
                    h.drawable,
                    h.primitive_index,
                    h.distance,
                    h.world_point,
                )
            })
            .collect()
    }
    assert!(hits_of(i).is_empty(), "no full records");
    match i {
        AnyIntersector::LineSegment(i) => (i.summaries())
            .map(|h| {
                hit(
                    h.node_path,
                    h.drawable,
                    h.primitive_index,
                    h.ratio,
                    h.world_point,
                )
            })
            .collect(),
        AnyIntersector::Polytope(i) => volume(i.summaries()),
        AnyIntersector::Sphere(i) => volume(i.summaries()),
    }
}

/// Answers `query` through [`IntersectionVisitor::apply_batch`], as one of several
/// identical queries answered in parallel; every copy must agree.
pub fn run_batch(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
    traversal: &Traversal,
) -> Result<Vec<Hit>, QueryError> {
    let visitor = traversal.visitor(true);
    answer(query, limit, |i| {
        let mut copies = vec![i.clone(); 4];
        for outcome in visitor.apply_batch(scene, root, &mut copies) {
            outcome?;
        }
        let first = copies.swap_remove(0);
        for other in &copies {
            assert_eq!(hits_of(other), hits_of(&first), "batch copies disagree");
        }
        *i = first;
        Ok(())
    })
}

/// Answers `query` through [`IntersectionVisitor::map_batch`], twice, each time after
/// a different query of the same kind, on one worker: the answers come from one
/// intersector moved from query to query, as a batch moves it; both must agree.
pub fn run_mapped(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    limit: IntersectionLimit,
    traversal: &Traversal,
) -> Result<Vec<Hit>, QueryError> {
    static ONE_WORKER: std::sync::OnceLock<Option<rayon::ThreadPool>> = std::sync::OnceLock::new();
    let pool = ONE_WORKER
        .get_or_init(|| rayon::ThreadPoolBuilder::new().num_threads(1).build().ok())
        .as_ref()
        .expect("a one-thread pool");
    // Queries of the same kind, valid when `query` is, hitting other things.
    let other = |k: f64| match query {
        Query::Segment(a, b) => Query::Segment(*b + DVec3::splat(k), *a),
        Query::Polytope(planes) => Query::Polytope(
            planes
                .iter()
                .map(|p| *p + DVec4::new(0.0, 0.0, 0.0, k))
                .collect(),
        ),
        Query::Sphere(c, r) => Query::Sphere(*c - DVec3::splat(k), r * 0.5 + k),
    };
    let batch = [other(1.0), query.clone(), other(-0.5), query.clone()];
    let make = |q: &Query| -> Result<AnyIntersector, QueryError> {
        Ok(match q {
            Query::Segment(a, b) => LineSegmentIntersector::new(*a, *b)?
                .with_limit(limit)
                .into(),
            Query::Polytope(planes) => {
                let polytope = Polytope::new(planes.iter().copied())?;
                PolytopeIntersector::new(polytope).with_limit(limit).into()
            }
            Query::Sphere(c, r) => SphereIntersector::new(*c, *r)?.with_limit(limit).into(),
        })
    };
    let move_to = |i: &mut AnyIntersector, q: &Query| match (i, q) {
        (AnyIntersector::LineSegment(i), Query::Segment(a, b)) => i.set_segment(*a, *b),
        (AnyIntersector::Polytope(i), Query::Polytope(planes)) => {
            i.set_polytope(Polytope::new(planes.iter().copied())?);
            Ok(())
        }
        (AnyIntersector::Sphere(i), Query::Sphere(c, r)) => i.set_sphere(*c, *r),
        (i, q) => {
            *i = make(q)?;
            Ok(())
        }
    };
    let visitor = traversal.visitor(true);
    let mut answers =
        pool.install(|| visitor.map_batch(scene, root, &batch, make, move_to, hits_of));
    let second = answers.pop().expect("four answers")?;
    let first = answers.swap_remove(1)?;
    assert_eq!(first, second, "a moved intersector answers as a new one");
    Ok(second)
}

/// The hits of an answered intersector, in the reference's form.
fn hits_of(i: &AnyIntersector) -> Vec<Hit> {
    match i {
        AnyIntersector::LineSegment(i) => i
            .intersections()
            .iter()
            .map(|h| Hit {
                key: (h.node_path.clone(), h.drawable, h.primitive_index),
                order: h.ratio,
                point: h.world_point,
                polygon: Vec::new(),
            })
            .collect(),
        AnyIntersector::Polytope(i) => i
            .intersections()
            .iter()
            .map(|h| Hit {
                key: (h.node_path.clone(), h.drawable, h.primitive_index),
                order: h.distance,
                point: h.world_point,
                polygon: h.polygon.to_vec(),
            })
            .collect(),
        AnyIntersector::Sphere(i) => i
            .intersections()
            .iter()
            .map(|h| Hit {
                key: (h.node_path.clone(), h.drawable, h.primitive_index),
                order: h.distance,
                point: h.world_point,
                polygon: Vec::new(),
            })
            .collect(),
    }
}

/// Builds the intersector for `query`, runs it with `run`, converts its hits.
fn answer(
    query: &Query,
    limit: IntersectionLimit,
    mut run: impl FnMut(&mut AnyIntersector) -> Result<(), QueryError>,
) -> Result<Vec<Hit>, QueryError> {
    let mut i: AnyIntersector = match query {
        Query::Segment(a, b) => LineSegmentIntersector::new(*a, *b)?
            .with_limit(limit)
            .into(),
        Query::Polytope(planes) => PolytopeIntersector::new(Polytope::new(planes.iter().copied())?)
            .with_limit(limit)
            .into(),
        Query::Sphere(c, r) => SphereIntersector::new(*c, *r)?.with_limit(limit).into(),
    };
    run(&mut i)?;
    Ok(hits_of(&i))
}

/// One primitive in world space.
#[derive(Clone, Debug)]
pub struct WorldPrimitive {
    /// Node path, drawable and primitive index.
    pub key: PrimKey,
    /// Point, line or triangle.
    pub kind: PrimitiveKind,
    /// Its 1, 2 or 3 vertices in world space.
    pub vertices: Vec<DVec3>,
}

#[derive(Default)]
struct Collect {
    out: Vec<(PrimitiveKind, Vec<Vec3>, u32)>,
}

impl PrimitiveFunctor for Collect {
    fn point(&mut self, vertex: Vec3, _: u32, primitive_index: u32) {
        self.out
            .push((PrimitiveKind::Point, vec![vertex], primitive_index));
    }
    fn line(&mut self, vertices: [Vec3; 2], _: [u32; 2], primitive_index: u32) {
        self.out
            .push((PrimitiveKind::Line, vertices.to_vec(), primitive_index));
    }
    fn triangle(&mut self, vertices: [Vec3; 3], _: [u32; 3], primitive_index: u32) {
        self.out
            .push((PrimitiveKind::Triangle, vertices.to_vec(), primitive_index));
    }
}

/// What the visitor's settings let through, as the reference models them: its masks and
/// its LOD selection.
#[derive(Clone, Copy, Debug)]
pub struct Traversal {
    /// The visitor's traversal mask.
    pub traversal_mask: u32,
    /// The visitor's override mask.
    pub override_mask: u32,
    /// Which children of a LOD node are visited.
    pub lod: LodSelection,
}

impl Traversal {
    /// A new visitor's settings: every node whose mask is not zero, the most detailed
    /// LOD child.
    pub const DEFAULT: Traversal = Traversal {
        traversal_mask: !0,
        override_mask: 0,
        lod: LodSelection::HighestDetail,
    };

    /// A visitor with these settings; acceleration on or off.
    pub fn visitor(&self, accelerated: bool) -> IntersectionVisitor {
        let mut visitor = IntersectionVisitor::new();
        visitor
            .set_use_acceleration(accelerated)
            .set_traversal_mask(self.traversal_mask)
            .set_override_mask(self.override_mask)
            .set_lod_selection(self.lod);
        visitor
    }
}

/// Every primitive under `root`, once per node path, in world space, as a new visitor
/// reaches them ([`flatten_under`] with [`Traversal::DEFAULT`]).
pub fn flatten(scene: &SceneGraph, root: NodeId) -> Vec<WorldPrimitive> {
    flatten_under(scene, root, &Traversal::DEFAULT)
}

/// Every primitive under `root` that a visitor set as `traversal` says reaches, once per
/// node path, in world space. Handles every node kind: a node is entered iff
/// `traversal_mask & (override_mask | node_mask) != 0`; a Switch's enabled children; a
/// LOD's child whose range starts nearest (the first of equals), or those whose range
/// holds the eye's distance to the LOD's centre (its own, or its bound's) in world space;
/// relative and absolute transforms (through [`SceneGraph::local_to_world`]). Subtrees
/// under a singular transform are left out, as the design says they are never hit.
pub fn flatten_under(
    scene: &SceneGraph,
    root: NodeId,
    traversal: &Traversal,
) -> Vec<WorldPrimitive> {
    let mut out = Vec::new();
    let mut path = vec![root];
    walk(scene, traversal, &mut path, &mut out);
    out
}

fn walk(
    scene: &SceneGraph,
    traversal: &Traversal,
    path: &mut Vec<NodeId>,
    out: &mut Vec<WorldPrimitive>,
) {
    let id = *path.last().expect("non-empty path");
    let node = scene.node(id).expect("node on the path");
    if traversal.traversal_mask & (traversal.override_mask | node.node_mask()) == 0 {
        return;
    }
    let children = node.children();
    let shown: Vec<bool> = match node.kind() {
        NodeKind::Geode { drawables } => {
            let m: DMat4 = scene.local_to_world(path).expect("valid path");
            if m.determinant() == 0.0 {
                return;
            }
            for &d in drawables {
                let mut c = Collect::default();
                scene.drawable(d).expect("drawable").accept(&mut c);
                for (kind, vs, index) in c.out {
                    out.push(WorldPrimitive {
                        key: (path.clone(), d, index),
                        kind,
                        vertices: vs
                            .iter()
                            .map(|v| m.transform_point3(v.as_dvec3()))
                            .collect(),
                    });
                }
            }
            return;
        }
        NodeKind::Group | NodeKind::Transform(_) => vec![true; children.len()],
        NodeKind::Switch { enabled } => enabled.clone(),
        NodeKind::Lod(lod) => match traversal.lod {
            LodSelection::HighestDetail => {
                let mut nearest: Option<usize> = None;
                for (k, range) in lod.ranges.iter().enumerate() {
                    if nearest.is_none_or(|n| range.0 < lod.ranges[n].0) {
                        nearest = Some(k);
                    }
                }
                (0..children.len()).map(|k| Some(k) == nearest).collect()
            }
            LodSelection::EyePoint(eye) => {
                let center = match lod.center {
                    Some(c) => c,
                    None => match scene.node_bound(id) {
                        Some(bound) => bound.center,
                        None => return,
                    },
                };
                let m = scene.local_to_world(path).expect("valid path");
                let distance = m.transform_point3(center).distance(eye);
                lod.ranges
                    .iter()
                    .map(|&(min, max)| min <= distance && distance < max)
                    .collect()
            }
        },
    };
    for (&c, on) in children.iter().zip(shown) {
        if on {
            path.push(c);
            walk(scene, traversal, path, out);
            path.pop();
        }
    }
}

/// The reference's answer for one primitive.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Verdict {
    /// Hit even with everything shrunk by the margin; the order key (ratio or distance).
    Hit(f64),
    /// Missed even with everything grown by the margin.
    Miss,
    /// Within the margin of a boundary: either answer is right.
    Unsure,
}

/// Segment `s → e` against triangle `(a, b, c)` (Möller–Trumbore). `margin` is relative
/// (barycentric and ratio units).
pub fn segment_triangle(s: DVec3, e: DVec3, [a, b, c]: [DVec3; 3], margin: f64) -> Verdict {
    let d = e - s;
    let (e1, e2) = (b - a, c - a);
    let n = e1.cross(e2);
    // Near-degenerate triangles and near-coplanar segments are boundary cases.
    if n.length() <= 1e-9 * e1.length() * e2.length()
        || n.dot(d).abs() <= 1e-9 * n.length() * d.length()
    {
        return if near_miss_box(s, e, &[a, b, c], margin) {
            Verdict::Miss
        } else {
            Verdict::Unsure
        };
    }
    let p = d.cross(e2);
    let det = e1.dot(p);
    let inv = 1.0 / det;
    let t0 = s - a;
    let u = t0.dot(p) * inv;
    let q = t0.cross(e1);
    let v = d.dot(q) * inv;
    let t = e2.dot(q) * inv;
    let w = 1.0 - u - v;
    let lo = u.min(v).min(w).min(t).min(1.0 - t);
    if lo > margin {
        Verdict::Hit(t)
    } else if lo < -margin {
        Verdict::Miss
    } else {
        Verdict::Unsure
    }
}

/// True when the segment's and the primitive's boxes are apart by more than `margin`
/// (relative to their size): a sure miss for degenerate cases.
fn near_miss_box(s: DVec3, e: DVec3, vs: &[DVec3], margin: f64) -> bool {
    let (mut lo, mut hi) = (DVec3::splat(f64::INFINITY), DVec3::splat(f64::NEG_INFINITY));
    for v in vs {
        lo = lo.min(*v);
        hi = hi.max(*v);
    }
    let pad = margin * (1.0 + (hi - lo).length() + (e - s).length());
    let (slo, shi) = (s.min(e), s.max(e));
    (slo - hi).max_element() > pad || (lo - shi).max_element() > pad
}

/// The point of triangle `(a, b, c)` closest to `p` (Ericson, Real-Time Collision
/// Detection 5.1.5), in f64.
pub fn closest_on_triangle(p: DVec3, [a, b, c]: [DVec3; 3]) -> DVec3 {
    let (ab, ac, ap) = (b - a, c - a, p - a);
    if ab.cross(ac).length_squared() <= 1e-16 * ab.length_squared() * ac.length_squared() {
        // Zero area (a repeated vertex, or three in a line), or so little that the
        // triangle is within 1e-8 of its longest edge's length of its edges (three
        // vertices in a line but for the rounding of a transform): the triangle is its
        // edges, far inside the checks' margin. Ericson's regions divide by zero there (a
        // repeated vertex gives 0 / 0), and next to it their products cancel to noise
        // (a sliver 10^-15 wide, with a ball 0.65 from one edge, was found missed).
        return closest_on_edges(p, [a, b, c]);
    }
    let (d1, d2) = (ab.dot(ap), ac.dot(ap));
    if d1 <= 0.0 && d2 <= 0.0 {
        return a;
    }
    let bp = p - b;
    let (d3, d4) = (ab.dot(bp), ac.dot(bp));
    if d3 >= 0.0 && d4 <= d3 {
        return b;
    }
    let vc = d1 * d4 - d3 * d2;
    if vc <= 0.0 && d1 >= 0.0 && d3 <= 0.0 {
        return a + ab * (d1 / (d1 - d3));
    }
    let cp = p - c;
    let (d5, d6) = (ab.dot(cp), ac.dot(cp));
    if d6 >= 0.0 && d5 <= d6 {
        return c;
    }
    let vb = d5 * d2 - d1 * d6;
    if vb <= 0.0 && d2 >= 0.0 && d6 <= 0.0 {
        return a + ac * (d2 / (d2 - d6));
    }
    let va = d3 * d6 - d5 * d4;
    if va <= 0.0 && (d4 - d3) >= 0.0 && (d5 - d6) >= 0.0 {
        return b + (c - b) * ((d4 - d3) / ((d4 - d3) + (d5 - d6)));
    }
    let denom = 1.0 / (va + vb + vc);
    if !denom.is_finite() {
        // Nearly degenerate: the closest point of its three edges.
        return closest_on_edges(p, [a, b, c]);
    }
    a + ab * (vb * denom) + ac * (vc * denom)
}

/// The point of the three edges of `(a, b, c)` closest to `p`.
fn closest_on_edges(p: DVec3, [a, b, c]: [DVec3; 3]) -> DVec3 {
    [(a, b), (b, c), (c, a)]
        .into_iter()
        .map(|(x, y)| closest_on_segment(p, x, y))
        .min_by(|x, y| (*x - p).length().total_cmp(&(*y - p).length()))
        .expect("three edges")
}

/// The point of segment `[a, b]` closest to `p`.
pub fn closest_on_segment(p: DVec3, a: DVec3, b: DVec3) -> DVec3 {
    let d = b - a;
    let len2 = d.length_squared();
    if len2 == 0.0 {
        return a;
    }
    a + d * ((p - a).dot(d) / len2).clamp(0.0, 1.0)
}

/// The magnitude rounding errors scale with: 1 plus the largest coordinate of `points`.
fn magnitude(points: &[DVec3]) -> f64 {
    1.0 + points
        .iter()
        .map(|p| p.abs().max_element())
        .fold(0.0, f64::max)
}

/// Ball `(center, radius)` against a primitive; `margin` is relative to the magnitude of
/// the coordinates involved.
pub fn sphere_primitive(center: DVec3, radius: f64, prim: &WorldPrimitive, margin: f64) -> Verdict {
    let v = &prim.vertices;
    let margin = margin * (magnitude(v) + magnitude(&[center]) + radius);
    let closest = match prim.kind {
        PrimitiveKind::Point => v[0],
        PrimitiveKind::Line => closest_on_segment(center, v[0], v[1]),
        PrimitiveKind::Triangle => closest_on_triangle(center, [v[0], v[1], v[2]]),
    };
    let dist = (closest - center).length();
    if dist < radius - margin {
        Verdict::Hit(dist)
    } else if dist > radius + margin {
        Verdict::Miss
    } else {
        Verdict::Unsure
    }
}

/// Sutherland–Hodgman: the part of the convex polygon `poly` (any number of vertices,
/// possibly collinear) where every plane is `>= -offset * |normal|`.
pub fn clip(poly: &[DVec3], planes: &[DVec4], offset: f64) -> Vec<DVec3> {
    let mut cur = poly.to_vec();
    for p in planes {
        if cur.is_empty() {
            break;
        }
        let n = p.truncate();
        let dist = |x: DVec3| n.dot(x) + p.w + offset * n.length();
        let mut next = Vec::new();
        for i in 0..cur.len() {
            let (x, y) = (cur[i], cur[(i + 1) % cur.len()]);
            let (dx, dy) = (dist(x), dist(y));
            if dx >= 0.0 {
                next.push(x);
            }
            if (dx >= 0.0) != (dy >= 0.0) && cur.len() > 1 {
                next.push(x + (y - x) * (dx / (dx - dy)));
            }
        }
        cur = next;
    }
    cur
}

/// Polytope against a primitive; `margin` is relative to the magnitude of the
/// coordinates involved.
pub fn polytope_primitive(planes: &[DVec4], prim: &WorldPrimitive, margin: f64) -> Verdict {
    let offsets = planes
        .iter()
        .map(|p| p.w.abs() / p.truncate().length())
        .fold(0.0, f64::max);
    let margin = margin * (magnitude(&prim.vertices) + offsets);
    let inner = clip(&prim.vertices, planes, -margin);
    if !inner.is_empty() {
        let c = inner.iter().copied().sum::<DVec3>() / inner.len() as f64;
        let last = planes.last().expect("at least one plane");
        return Verdict::Hit((last.truncate().dot(c) + last.w) / last.truncate().length());
    }
    if clip(&prim.vertices, planes, margin).is_empty() {
        Verdict::Miss
    } else {
        Verdict::Unsure
    }
}

/// The reference verdict for every primitive under `root`, with the number of
/// triangles/lines/points that share its key (a quad is two triangles with one primitive
/// index, and a segment through its diagonal hits both). The verdicts of parts sharing a
/// key are merged: `Hit` if any part is surely hit (the least order key), `Miss` if all
/// are surely missed, `Unsure` otherwise. `margin` is relative: barycentric and ratio
/// units for segments, a fraction of the coordinates' magnitude for polytopes and
/// spheres.
pub fn verdicts(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    margin: f64,
) -> Vec<(PrimKey, Verdict)> {
    verdicts_with_parts(scene, root, query, margin, &Traversal::DEFAULT)
        .into_iter()
        .map(|(k, v, _)| (k, v))
        .collect()
}

fn verdict_of(prim: &WorldPrimitive, query: &Query, margin: f64) -> Verdict {
    match query {
        Query::Segment(s, e) => match prim.kind {
            // Without a picking tolerance segments hit triangles only.
            PrimitiveKind::Triangle => segment_triangle(
                *s,
                *e,
                [prim.vertices[0], prim.vertices[1], prim.vertices[2]],
                margin,
            ),
            _ => Verdict::Miss,
        },
        Query::Sphere(c, r) => sphere_primitive(*c, *r, prim, margin),
        Query::Polytope(planes) => polytope_primitive(planes, prim, margin),
    }
}

/// The verdict of a key from those of two of its parts: `Hit` if either part is surely
/// hit (the least order key), `Miss` if both are surely missed, `Unsure` otherwise.
pub fn merge_verdicts(a: Verdict, b: Verdict) -> Verdict {
    match (a, b) {
        (Verdict::Hit(a), Verdict::Hit(b)) => Verdict::Hit(a.min(b)),
        (Verdict::Hit(a), _) | (_, Verdict::Hit(a)) => Verdict::Hit(a),
        (Verdict::Miss, Verdict::Miss) => Verdict::Miss,
        _ => Verdict::Unsure,
    }
}

/// [`verdicts`] plus the number of parts of each key, for a visitor set as `traversal`.
pub fn verdicts_with_parts(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    margin: f64,
    traversal: &Traversal,
) -> Vec<(PrimKey, Verdict, usize)> {
    let mut out: Vec<(PrimKey, Verdict, usize)> = Vec::new();
    let mut index: HashMap<PrimKey, usize> = HashMap::new();
    for prim in flatten_under(scene, root, traversal) {
        let v = verdict_of(&prim, query, margin);
        match index.get(&prim.key) {
            Some(&i) => {
                let (_, old, parts) = &mut out[i];
                *parts += 1;
                *old = merge_verdicts(*old, v);
            }
            None => {
                index.insert(prim.key.clone(), out.len());
                out.push((prim.key, v, 1));
            }
        }
    }
    out
}

/// Checks hits found with limit `None` by a new visitor against the reference
/// ([`check_under`] with [`Traversal::DEFAULT`]).
pub fn check(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    hits: &[Hit],
    margin: f64,
    key_tolerance: f64,
) -> Result<(), String> {
    check_under(
        scene,
        root,
        query,
        hits,
        margin,
        key_tolerance,
        &Traversal::DEFAULT,
    )
}

/// Checks hits found with limit `None` by a visitor set as `traversal` against the
/// reference: every sure hit found, no sure miss found, no key reported more often than
/// it has parts, and the least order key of a sure hit within `key_tolerance` of the
/// reference's. Returns a description of the first disagreement.
pub fn check_under(
    scene: &SceneGraph,
    root: NodeId,
    query: &Query,
    hits: &[Hit],
    margin: f64,
    key_tolerance: f64,
    traversal: &Traversal,
) -> Result<(), String> {
    let mut found: HashMap<&PrimKey, Vec<&Hit>> = HashMap::new();
    for h in hits {
        found.entry(&h.key).or_default().push(h);
    }
    let verdicts = verdicts_with_parts(scene, root, query, margin, traversal);
    for (key, verdict, parts) in &verdicts {
        let got = found.remove(key).unwrap_or_default();
        if got.len() > *parts {
            return Err(format!(
                "{key:?} reported {} times but has {parts} part(s)",
                got.len()
            ));
        }
        let least = got.iter().map(|h| h.order).fold(f64::INFINITY, f64::min);
        match verdict {
            Verdict::Hit(order) if got.is_empty() => {
                return Err(format!(
                    "{key:?} is clearly hit (key {order}) but was not found"
                ))
            }
            Verdict::Hit(order) if (least - order).abs() > key_tolerance => {
                return Err(format!(
                    "{key:?}: order key {least} but the reference says {order}"
                ))
            }
            Verdict::Miss if !got.is_empty() => {
                return Err(format!("{key:?} is clearly missed but was found: {got:?}"))
            }
            _ => {}
        }
    }
    if let Some((k, h)) = found.into_iter().next() {
        return Err(format!(
            "hit on a primitive the reference does not know: {k:?} {h:?}"
        ));
    }
    Ok(())
}

/// The hits grouped by their (node path, drawable) visit.
pub fn by_visit(hits: &[Hit]) -> BTreeMap<(Vec<NodeId>, DrawableId), Vec<&Hit>> {
    let mut m: BTreeMap<_, Vec<&Hit>> = BTreeMap::new();
    for h in hits {
        m.entry((h.key.0.clone(), h.key.1)).or_default().push(h);
    }
    m
}

/// Builds a geometry or panics: for test scenes whose indices are valid by construction.
pub fn geometry(
    vertices: Vec<Vec3>,
    sets: Vec<scene_intersect::drawable::PrimitiveSet>,
) -> Geometry {
    let mut g = Geometry::new(vertices);
    for s in sets {
        g.add_primitive_set(s).expect("valid primitive set");
    }
    g
}
