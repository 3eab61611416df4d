//! [`PrimitiveBvh`]: a drawable's primitives (triangles, lines, points) in a BVH.

use std::cell::Cell;

use glam::Vec3;

use super::aabb::Aabb;
use super::aabb4::{Aabb4, WideEntries};
use super::bvh::{Bvh, OrderedVisitor, MIN_SPLIT_ITEMS};
use super::triangle_list::{StripOrFan, TriangleList};
use super::wide_bvh::WideBvh;
use crate::drawable::{Geometry, PrimitiveFunctor};
use crate::intersectors::PrimitiveKind;

/// One primitive as the BVH stores it: its vertex indices (a line repeats its last, a
/// point its only one) and its primitive index, the kind in the two top bits. 16 bytes.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct PackedPrimitive {
    /// Vertex indices into the geometry's vertex array.
    pub indices: [u32; 3],
    tagged_index: u32,
}

const KIND_SHIFT: u32 = 30;
const INDEX_MASK: u32 = (1 << KIND_SHIFT) - 1;

impl PackedPrimitive {
    fn new(kind: PrimitiveKind, indices: [u32; 3], primitive_index: u32) -> Self {
        let tag = match kind {
            PrimitiveKind::Point => 0,
            PrimitiveKind::Line => 1,
            PrimitiveKind::Triangle => 2,
        };
        PackedPrimitive {
            indices,
            tagged_index: (tag << KIND_SHIFT) | primitive_index,
        }
    }

    /// The kind.
    #[inline]
    pub fn kind(&self) -> PrimitiveKind {
        match self.tagged_index >> KIND_SHIFT {
            0 => PrimitiveKind::Point,
            1 => PrimitiveKind::Line,
            _ => PrimitiveKind::Triangle,
        }
    }

    /// The primitive index in the drawable.
    #[inline]
    pub fn primitive_index(&self) -> u32 {
        self.tagged_index & INDEX_MASK
    }
}

/// Drawables of at least this many primitives get finer leaves: their BVH splits ranges
/// down to [`FINE_MIN_SPLIT`] primitives when the SAH asks (below 8 they are leaves
/// otherwise: ~4.7 primitives per leaf on littlest_tokyo), so a query tests one or two
/// triangles per leaf instead of five (nearest segments ~5 % fewer instructions when
/// these trees carried every query). Small drawables keep the coarser leaves, unless
/// they are instanced (see [`PrimitiveBvh::build_instanced`]).
const FINE_LEAVES_FROM: usize = 1024;
/// See [`FINE_LEAVES_FROM`].
const FINE_MIN_SPLIT: usize = 5;
/// The smallest range an instanced drawable's BVH may split (the SAH decides; a leaf
/// holds one to eight primitives).
const INSTANCED_MIN_SPLIT: usize = 2;

/// The primitives of one [`Geometry`] in a bounding volume hierarchy, as the primitive
/// functor emits them (same vertex indices, same primitive indices, non-finite ones
/// skipped), so that a query fed from the BVH sees exactly what the plain traversal sees.
///
/// The tree is built by the SAH as a binary [`Bvh`] and kept collapsed to four children
/// per node ([`WideBvh`]): a walk tests four boxes at once (one SIMD test where the
/// query has one) and visits about half as many nodes.
///
/// It keeps no vertex positions: they are read from the geometry, so the structure costs
/// 16 bytes per primitive ([`PackedPrimitive`]) plus the nodes (112 bytes each, about one
/// per two to three leaves). A geometry that is one triangle list (a single
/// `Triangles` primitive set, as glTF meshes load, or a single `TriangleStrip`,
/// `TriangleFan` or `Polygon` set) costs 4 bytes per triangle instead of 16: only the
/// triangle's index is kept, and its vertex indices are read back from the set.
/// The scene graph builds it lazily per drawable and, whenever the drawable is edited,
/// refits it at its next use, or rebuilds it when the edit changed its primitive sets,
/// so it is never stale. Every method that reads primitives takes the geometry
/// it was built from.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct PrimitiveBvh {
    tree: WideBvh,
    primitives: Primitives,
    /// Whether every vertex of the geometry was finite at the build, so that it stores
    /// every primitive (see [`refit`](Self::refit)).
    built_finite: bool,
    /// The geometry's primitive sets at the build (`Geometry::topology`): a refit takes
    /// only a geometry holding the same ones.
    topology: u64,
}

/// How a [`PrimitiveBvh`] stores its primitives, in leaf order.
#[derive(Clone, Debug, PartialEq)]
enum Primitives {
    /// Any geometry: kind, vertex indices and primitive index of each.
    Packed(Vec<PackedPrimitive>),
    /// A geometry of one set of triangles, strips or fans: each triangle's number `p`
    /// (its primitive index too), its vertex indices read back from the set's entries
    /// (`3p..3p + 3` of a `Triangles` set; see [`Numbered`]).
    Numbers(Vec<u32>),
}

/// A geometry of one set of triangles, strips or fans, its triangles read back by
/// number (what [`Primitives::Numbers`] stores).
#[derive(Clone, Copy)]
enum Numbered<'g> {
    List(TriangleList<'g>),
    StripOrFan(StripOrFan<'g>),
}

impl<'g> Numbered<'g> {
    fn of(geometry: &'g Geometry) -> Option<Numbered<'g>> {
        match TriangleList::of(geometry) {
            Some(list) => Some(Numbered::List(list)),
            None => StripOrFan::of(geometry).map(Numbered::StripOrFan),
        }
    }

    /// The vertex indices of triangle `p`, or `None` when the set is shorter.
    fn triangle(&self, p: u32) -> Option<[u32; 3]> {
        match self {
            Numbered::List(list) => list.triangle(p),
            Numbered::StripOrFan(view) => view.triangle(p),
        }
    }
}

impl Default for Primitives {
    fn default() -> Self {
        Primitives::Packed(Vec::new())
    }
}

/// A walk's view of the stored primitives, with the geometry they are read from.
#[derive(Clone, Copy)]
enum Source<'a> {
    Packed(&'a [PackedPrimitive]),
    Numbers(&'a [u32], Numbered<'a>),
    /// The geometry is not one set of triangles although the BVH stores one (a caller
    /// passed another geometry): nothing can be read.
    Unreadable,
}

/// The most primitives a drawable may have to get a BVH (the kind shares the index's
/// u32, and a [`Bvh`] holds at most [`MAX_BVH_ITEMS`](super::MAX_BVH_ITEMS) items).
pub const MAX_ACCELERATED_PRIMITIVES: usize = if (INDEX_MASK as usize) < super::bvh::MAX_BVH_ITEMS {
    INDEX_MASK as usize
} else {
    super::bvh::MAX_BVH_ITEMS
};

impl PrimitiveBvh {
    /// Builds the BVH of a geometry; `None` when it has more than
    /// [`MAX_ACCELERATED_PRIMITIVES`] primitives (it is then intersected without one).
    pub fn build(geometry: &Geometry) -> Option<PrimitiveBvh> {
        let min_split = if geometry.primitive_count() >= FINE_LEAVES_FROM {
            FINE_MIN_SPLIT
        } else {
            MIN_SPLIT_ITEMS
        };
        Self::build_with_min_split(geometry, min_split)
    }

    /// [`build`](Self::build) for a geometry the scene places several times (a shared
    /// building mesh): its tree splits as finely as the SAH asks at any size, as its
    /// extra nodes are paid once for all its instances while every instance a query
    /// meets saves the exact tests of the leaves' other primitives (the project's city:
    /// nearest segments −10 %, all hits −16 %, boxes −3 % instructions, for 1 % more
    /// memory).
    pub fn build_instanced(geometry: &Geometry) -> Option<PrimitiveBvh> {
        Self::build_with_min_split(geometry, INSTANCED_MIN_SPLIT)
    }

    fn build_with_min_split(geometry: &Geometry, min_split: usize) -> Option<PrimitiveBvh> {
        if geometry.primitive_count() > MAX_ACCELERATED_PRIMITIVES {
            return None;
        }
        struct Collect {
            primitives: Vec<PackedPrimitive>,
            boxes: Vec<Aabb>,
        }
        impl PrimitiveFunctor for Collect {
            fn point(&mut self, v: Vec3, i: u32, p: u32) {
                self.primitives
                    .push(PackedPrimitive::new(PrimitiveKind::Point, [i; 3], p));
                self.boxes.push(Aabb::from_points(&[v]));
            }
            fn line(&mut self, v: [Vec3; 2], i: [u32; 2], p: u32) {
                self.primitives.push(PackedPrimitive::new(
                    PrimitiveKind::Line,
                    [i[0], i[1], i[1]],
                    p,
                ));
                self.boxes.push(Aabb::from_points(&v));
            }
            fn triangle(&mut self, v: [Vec3; 3], i: [u32; 3], p: u32) {
                self.primitives
                    .push(PackedPrimitive::new(PrimitiveKind::Triangle, i, p));
                self.boxes.push(Aabb::from_points(&v));
            }
        }
        let mut collect = Collect {
            primitives: Vec::with_capacity(geometry.primitive_count()),
            boxes: Vec::with_capacity(geometry.primitive_count()),
        };
        geometry.accept_functor(&mut collect);
        let (bvh, order) = Bvh::build_with_min_split(&collect.boxes, min_split);
        let packed: Vec<PackedPrimitive> = order
            .iter()
            .map(|&i| collect.primitives[i as usize])
            .collect();
        // One set of triangles, strips or fans keeps only the triangles' numbers, if
        // they give back exactly the vertex indices the functor emitted (checked here,
        // so reading them back can never differ from the decomposition).
        let numbered = Numbered::of(geometry);
        let by_number = numbered.is_some_and(|numbered| {
            packed.iter().all(|p| {
                p.kind() == PrimitiveKind::Triangle
                    && numbered.triangle(p.primitive_index()) == Some(p.indices)
            })
        });
        let primitives = if by_number {
            Primitives::Numbers(packed.iter().map(|p| p.primitive_index()).collect())
        } else {
            Primitives::Packed(packed)
        };
        Some(PrimitiveBvh {
            tree: WideBvh::from_binary(&bvh),
            primitives,
            built_finite: geometry.non_finite_vertex_count() == 0,
            topology: geometry.topology(),
        })
    }

    /// After `geometry`'s vertices moved, its primitive sets unchanged (the geometry this
    /// BVH was built from): sets every leaf's box to its primitives' boxes at their new
    /// corners and every box above to the union of its children, keeping the tree's
    /// shape: 15 to 28 times faster than a rebuild (no sorting, no split search; the
    /// biggest meshes of littlest_tokyo, zdm2 and truck_town, 13 000 to 59 000
    /// primitives, 0.1–1.3 ms), though the tree's quality drifts as the shape deforms.
    ///
    /// False when `geometry` does not hold the primitive sets the tree was built over
    /// (another geometry than that one or a clone of it, or sets added or removed
    /// since), when a stored primitive reads past its vertices (fewer, since
    /// [`Geometry::set_vertices`]), or when a vertex of the geometry is not finite, now
    /// or at the build (primitives reading one are skipped, so the stored primitives
    /// would no longer be the ones to store): the tree is unusable then, rebuild it.
    ///
    /// ```
    /// use glam::Vec3;
    /// use scene_intersect::accel::PrimitiveBvh;
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    ///
    /// let vertices: Vec<Vec3> = (0..30).map(|i| Vec3::new(i as f32, (i % 2) as f32, 0.0)).collect();
    /// let mut strip = Geometry::new(vertices)
    ///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::TriangleStrip, 0, 30))?;
    /// let mut bvh = PrimitiveBvh::build(&strip).unwrap();
    /// // The strip lifted 5 units: the same tree, its boxes lifted too.
    /// strip.vertices_mut().iter_mut().for_each(|v| v.y += 5.0);
    /// assert!(bvh.refit(&strip));
    /// assert_eq!(bvh.bounds().min.y, 5.0);
    /// assert_eq!(bvh.bounds().max, Vec3::new(29.0, 6.0, 0.0));
    /// # Ok::<(), scene_intersect::graph::GraphError>(())
    /// ```
    pub fn refit(&mut self, geometry: &Geometry) -> bool {
        if self.topology != geometry.topology()
            || !self.built_finite
            || geometry.non_finite_vertex_count() > 0
        {
            return false;
        }
        let vertices = geometry.vertices();
        let corners = |indices: [u32; 3]| {
            let corner = |i: u32| vertices.get(i as usize).copied();
            Some(Aabb::from_points(&[
                corner(indices[0])?,
                corner(indices[1])?,
                corner(indices[2])?,
            ]))
        };
        // A primitive's box into its leaf's (`None`: vertex indices that do not read).
        let mut readable = true;
        let mut grow = |leaf: &mut Aabb, indices: Option<[u32; 3]>| match indices.and_then(corners)
        {
            Some(c) => leaf.grow(&c),
            None => readable = false,
        };
        match &self.primitives {
            Primitives::Packed(packed) => self.tree.refit(|range| {
                let mut b = Aabb::EMPTY;
                for p in &packed[range] {
                    grow(&mut b, Some(p.indices));
                }
                b
            }),
            Primitives::Numbers(triangles) => {
                let Some(numbered) = Numbered::of(geometry) else {
                    return false;
                };
                self.tree.refit(|range| {
                    let mut b = Aabb::EMPTY;
                    for &p in &triangles[range] {
                        grow(&mut b, numbered.triangle(p));
                    }
                    b
                })
            }
        }
        readable
    }

    /// Number of primitives held.
    pub fn len(&self) -> usize {
        match &self.primitives {
            Primitives::Packed(p) => p.len(),
            Primitives::Numbers(p) => p.len(),
        }
    }

    /// True when it holds no primitive.
    pub fn is_empty(&self) -> bool {
        self.len() == 0
    }

    /// Whether it stores only its triangles' numbers, reading their vertex indices back
    /// from the geometry's one set of triangles, strips or fans (4 bytes per triangle
    /// instead of 16).
    pub fn stores_triangle_numbers(&self) -> bool {
        matches!(self.primitives, Primitives::Numbers(_))
    }

    /// The former name of [`stores_triangle_numbers`](Self::stores_triangle_numbers),
    /// from when only triangle lists were stored so.
    #[deprecated(
        since = "0.1.0",
        note = "renamed `stores_triangle_numbers`: strips and fans are stored so too"
    )]
    pub fn is_triangle_list(&self) -> bool {
        self.stores_triangle_numbers()
    }

    /// Bytes used (nodes and stored primitives), beyond the geometry's own data.
    pub fn memory_bytes(&self) -> usize {
        let primitives = match &self.primitives {
            Primitives::Packed(p) => p.len() * std::mem::size_of::<PackedPrimitive>(),
            Primitives::Numbers(p) => p.len() * std::mem::size_of::<u32>(),
        };
        self.tree.memory_bytes() + primitives
    }

    /// The stored primitives as read from `geometry`.
    fn source<'a>(&'a self, geometry: &'a Geometry) -> Source<'a> {
        match &self.primitives {
            Primitives::Packed(p) => Source::Packed(p),
            Primitives::Numbers(p) => match Numbered::of(geometry) {
                Some(numbered) => Source::Numbers(p, numbered),
                None => Source::Unreadable,
            },
        }
    }

    /// The tree; its leaves' item ranges number the stored primitives.
    pub fn tree(&self) -> &WideBvh {
        &self.tree
    }

    /// The box of every primitive (empty when there is none).
    pub fn bounds(&self) -> Aabb {
        self.tree.bounds()
    }

    /// The length of the diagonal of [`bounds`](Self::bounds), kept with the tree.
    pub fn diagonal(&self) -> f64 {
        self.tree.diagonal()
    }

    /// Feeds `functor` every primitive in a leaf whose path `enter` accepts; `geometry`
    /// is the one the BVH was built from.
    pub fn for_each_candidate<F: PrimitiveFunctor + ?Sized>(
        &self,
        geometry: &Geometry,
        enter: impl FnMut(&Aabb) -> bool,
        functor: &mut F,
    ) {
        let (source, vertices) = (self.source(geometry), geometry.vertices());
        self.tree.for_each_leaf(enter, |range| {
            emit_range(source, range, vertices, functor);
        });
    }

    /// [`for_each_candidate`](Self::for_each_candidate) with a test of four boxes at
    /// once: `enter` returns the mask of the lanes to enter (bit `k` for lane `k`;
    /// what it answers for unused lanes is ignored).
    pub fn for_each_candidate_wide<F: PrimitiveFunctor + ?Sized>(
        &self,
        geometry: &Geometry,
        mut enter: impl FnMut(&Aabb4) -> u32,
        functor: &mut F,
    ) {
        self.walk_ordered(
            geometry,
            |b| WideEntries {
                mask: enter(b),
                keys: glam::Vec4::ZERO,
            },
            None,
            functor,
        );
    }

    /// Feeds `functor` the primitives of a walk that carries a state down the tree (see
    /// [`WideBvh::for_each_leaf_with`]): `lanes` picks, four boxes at a time, those worth
    /// a closer look; `enter` maps each such box and its parent's state to its own state
    /// (`None`: skip), a node whose state satisfies `whole` is taken with its entire
    /// subtree, and `on_leaf` hands each leaf's state to the functor before its
    /// primitives.
    #[allow(clippy::too_many_arguments)]
    pub fn for_each_candidate_with<S: Copy, F: PrimitiveFunctor + ?Sized>(
        &self,
        geometry: &Geometry,
        root_state: S,
        lanes: impl FnMut(&Aabb4) -> u32,
        enter: impl FnMut(&Aabb, S) -> Option<S>,
        whole: impl Fn(S) -> bool,
        functor: &mut F,
        mut on_leaf: impl FnMut(&mut F, S),
    ) {
        let (source, vertices) = (self.source(geometry), geometry.vertices());
        self.tree
            .for_each_leaf_with(root_state, lanes, enter, whole, |range, state| {
                on_leaf(functor, state);
                emit_range(source, range, vertices, functor);
            });
    }

    /// Nearest-first traversal for rays: `entries` gives, for four boxes at once, which
    /// the query enters and a lower bound of the parameter at which it enters each
    /// (as [`WideSegmentSlab::entries`](super::WideSegmentSlab::entries)); nearer
    /// children are visited first, and a node entered beyond `limit` is skipped (the
    /// functor may lower `limit` as it finds hits).
    pub fn for_each_candidate_ordered<F: PrimitiveFunctor + ?Sized>(
        &self,
        geometry: &Geometry,
        entries: impl FnMut(&Aabb4) -> WideEntries,
        limit: &Cell<f64>,
        functor: &mut F,
    ) {
        self.walk_ordered(geometry, entries, Some(limit), functor);
    }

    /// The walk of [`for_each_candidate_ordered`](Self::for_each_candidate_ordered),
    /// or without a limit depth first.
    fn walk_ordered<F: PrimitiveFunctor + ?Sized>(
        &self,
        geometry: &Geometry,
        entries: impl FnMut(&Aabb4) -> WideEntries,
        limit: Option<&Cell<f64>>,
        functor: &mut F,
    ) {
        struct Walk<'a, E, F: ?Sized> {
            entries: E,
            limit: Option<&'a Cell<f64>>,
            source: Source<'a>,
            vertices: &'a [Vec3],
            functor: &'a mut F,
        }
        impl<E: FnMut(&Aabb4) -> WideEntries, F: PrimitiveFunctor + ?Sized> OrderedVisitor
            for Walk<'_, E, F>
        {
            /// The root's box, alone in lane 0.
            fn entry(&mut self, bounds: &Aabb) -> Option<f64> {
                let mut lanes = Aabb4::EMPTY;
                lanes.set(0, bounds);
                let e = (self.entries)(&lanes);
                (e.mask & 1 != 0).then(|| f64::from(e.keys.x))
            }
            fn entries(&mut self, boxes: &Aabb4) -> WideEntries {
                (self.entries)(boxes)
            }
            fn limit(&self) -> f64 {
                self.limit.map_or(f64::INFINITY, Cell::get)
            }
            fn leaf(&mut self, items: std::ops::Range<usize>) -> bool {
                emit_range(self.source, items, self.vertices, self.functor);
                true
            }
        }
        let mut walk = Walk {
            entries,
            limit,
            source: self.source(geometry),
            vertices: geometry.vertices(),
            functor,
        };
        if limit.is_some() {
            self.tree.for_each_leaf_ordered(&mut walk);
        } else {
            self.tree.for_each_leaf_depth_first(&mut walk);
        }
    }
}

/// Hands the stored primitives at `range` to the functor, exactly as the decomposition
/// did (a primitive whose vertices cannot be read is skipped).
#[inline]
fn emit_range<F: PrimitiveFunctor + ?Sized>(
    source: Source<'_>,
    range: std::ops::Range<usize>,
    vertices: &[Vec3],
    functor: &mut F,
) {
    match source {
        Source::Packed(primitives) => {
            for p in primitives.get(range).unwrap_or_default() {
                emit(p, vertices, functor);
            }
        }
        // The kind of set is decided once a range, each kind read in its own loop.
        Source::Numbers(triangles, Numbered::List(list)) => {
            emit_numbered(triangles, range, vertices, functor, |p| list.triangle(p));
        }
        Source::Numbers(triangles, Numbered::StripOrFan(view)) => {
            emit_numbered(triangles, range, vertices, functor, |p| view.triangle(p));
        }
        Source::Unreadable => {}
    }
}

/// Hands the triangles numbered `triangles[range]` to the functor, their vertex indices
/// given by `indices`.
#[inline(always)]
fn emit_numbered<F: PrimitiveFunctor + ?Sized>(
    triangles: &[u32],
    range: std::ops::Range<usize>,
    vertices: &[Vec3],
    functor: &mut F,
    indices: impl Fn(u32) -> Option<[u32; 3]>,
) {
    let v = |i: u32| vertices.get(i as usize).copied();
    for &p in triangles.get(range).unwrap_or_default() {
        if let Some(i) = indices(p) {
            if let (Some(a), Some(b), Some(c)) = (v(i[0]), v(i[1]), v(i[2])) {
                functor.triangle([a, b, c], i, p);
            }
        }
    }
}

/// Hands one stored primitive to the functor, exactly as the decomposition did.
#[inline]
fn emit<F: PrimitiveFunctor + ?Sized>(p: &PackedPrimitive, vertices: &[Vec3], functor: &mut F) {
    let v = |i: u32| vertices.get(i as usize).copied();
    let [i0, i1, i2] = p.indices;
    match p.kind() {
        PrimitiveKind::Triangle => {
            if let (Some(a), Some(b), Some(c)) = (v(i0), v(i1), v(i2)) {
                functor.triangle([a, b, c], p.indices, p.primitive_index());
            }
        }
        PrimitiveKind::Line => {
            if let (Some(a), Some(b)) = (v(i0), v(i1)) {
                functor.line([a, b], [i0, i1], p.primitive_index());
            }
        }
        PrimitiveKind::Point => {
            if let Some(a) = v(i0) {
                functor.point(a, i0, p.primitive_index());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawable::{Drawable, PrimitiveMode, PrimitiveSet};

    #[derive(Default, PartialEq, Debug)]
    struct Record(Vec<(PrimitiveKind, Vec<u32>, u32)>);
    impl PrimitiveFunctor for Record {
        fn point(&mut self, _v: Vec3, i: u32, p: u32) {
            self.0.push((PrimitiveKind::Point, vec![i], p));
        }
        fn line(&mut self, _v: [Vec3; 2], i: [u32; 2], p: u32) {
            self.0.push((PrimitiveKind::Line, i.to_vec(), p));
        }
        fn triangle(&mut self, _v: [Vec3; 3], i: [u32; 3], p: u32) {
            self.0.push((PrimitiveKind::Triangle, i.to_vec(), p));
        }
    }

    #[test]
    fn the_bvh_emits_exactly_what_the_functor_emits() {
        let vertices: Vec<Vec3> = (0..40)
            .map(|i| Vec3::new((i % 7) as f32, (i / 7) as f32, ((i * 13) % 5) as f32))
            .collect();
        let g = Geometry::new(vertices)
            .with_primitive_set(PrimitiveSet::draw_arrays(
                PrimitiveMode::TriangleStrip,
                0,
                20,
            ))
            .unwrap()
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 20, 12))
            .unwrap()
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::LineLoop, 32, 5))
            .unwrap()
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 37, 3))
            .unwrap();
        let mut plain = Record::default();
        g.accept(&mut plain);
        let bvh = PrimitiveBvh::build(&g).unwrap();
        let mut accelerated = Record::default();
        bvh.for_each_candidate(&g, |_| true, &mut accelerated);
        plain.0.sort();
        accelerated.0.sort();
        assert_eq!(plain, accelerated);
        assert_eq!(bvh.len(), 18 + 6 + 5 + 3);
        assert!(bvh.memory_bytes() <= 32 * bvh.len());
    }

    #[test]
    fn a_triangle_list_keeps_only_triangle_indices_and_emits_the_same() {
        let mut vertices: Vec<Vec3> = (0..60)
            .map(|i| Vec3::new((i % 6) as f32, (i / 6) as f32, ((i * 7) % 4) as f32))
            .collect();
        // A non-finite vertex: its triangles are skipped by both paths.
        vertices[17] = Vec3::new(f32::NAN, 0.0, 0.0);
        let indices: Vec<u16> = (0..60u16).rev().chain(0..30).collect();
        let indexed = Geometry::new(vertices.clone())
            .with_primitive_set(PrimitiveSet::DrawElements {
                mode: PrimitiveMode::Triangles,
                indices: crate::drawable::Indices::U16(indices),
            })
            .unwrap();
        let arrays = Geometry::new(vertices)
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 3, 57))
            .unwrap();
        for g in [&indexed, &arrays] {
            let mut plain = Record::default();
            g.accept(&mut plain);
            let bvh = PrimitiveBvh::build(g).unwrap();
            assert!(bvh.stores_triangle_numbers());
            let mut accelerated = Record::default();
            bvh.for_each_candidate(g, |_| true, &mut accelerated);
            plain.0.sort();
            accelerated.0.sort();
            assert_eq!(plain, accelerated);
            // 4 bytes per triangle plus the nodes.
            assert_eq!(
                bvh.memory_bytes(),
                bvh.tree().memory_bytes() + 4 * bvh.len()
            );
            // Read through a geometry that is not a triangle list: nothing is emitted.
            let quads = Geometry::new(vec![Vec3::ZERO; 60])
                .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, 60))
                .unwrap();
            let mut wrong = Record::default();
            bvh.for_each_candidate(&quads, |_| true, &mut wrong);
            assert!(wrong.0.is_empty());
        }
        // Quads keep their packed primitives (two triangles share a primitive index).
        let quad = [Vec3::X, Vec3::Y, Vec3::Z, Vec3::ONE];
        let quads = Geometry::new(quad.to_vec())
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, 4))
            .unwrap();
        assert!(!PrimitiveBvh::build(&quads)
            .unwrap()
            .stores_triangle_numbers());
    }

    /// Strips, fans and polygons of one set keep only their triangle indices too, and
    /// emit what the decomposition emits.
    #[test]
    fn strips_and_fans_keep_only_triangle_indices_and_emit_the_same() {
        let vertices: Vec<Vec3> = (0..40)
            .map(|i| Vec3::new((i / 2) as f32, (i % 2) as f32, ((i * 5) % 3) as f32))
            .collect();
        let indices: Vec<u32> = (0..40).rev().chain(5..25).collect();
        for mode in [
            PrimitiveMode::TriangleStrip,
            PrimitiveMode::TriangleFan,
            PrimitiveMode::Polygon,
        ] {
            let arrays = Geometry::new(vertices.clone())
                .with_primitive_set(PrimitiveSet::draw_arrays(mode, 2, 37))
                .unwrap();
            let indexed = Geometry::new(vertices.clone())
                .with_primitive_set(PrimitiveSet::draw_elements_u32(mode, indices.clone()))
                .unwrap();
            for g in [&arrays, &indexed] {
                let mut plain = Record::default();
                g.accept(&mut plain);
                let bvh = PrimitiveBvh::build(g).unwrap();
                assert!(bvh.stores_triangle_numbers(), "{mode:?}");
                // The former name answers alike.
                #[allow(deprecated)]
                let former = bvh.is_triangle_list();
                assert!(former, "{mode:?}");
                let mut accelerated = Record::default();
                bvh.for_each_candidate(g, |_| true, &mut accelerated);
                plain.0.sort();
                accelerated.0.sort();
                assert_eq!(plain, accelerated, "{mode:?}");
                assert_eq!(plain.0.len(), g.primitive_count());
                // 4 bytes per triangle plus the nodes, as for a triangle list.
                assert_eq!(
                    bvh.memory_bytes(),
                    bvh.tree().memory_bytes() + 4 * bvh.len()
                );
                // Refitted after a move, it still emits what the decomposition does.
                let mut moved = g.clone();
                moved.vertices_mut().iter_mut().for_each(|v| v.y += 2.0);
                let mut refitted = bvh.clone();
                assert!(refitted.refit(&moved));
                assert_eq!(refitted.bounds().min.y, bvh.bounds().min.y + 2.0);
            }
        }
    }

    #[test]
    fn packing_keeps_kind_and_index() {
        let p = PackedPrimitive::new(PrimitiveKind::Line, [1, 2, 2], INDEX_MASK);
        assert_eq!(p.kind(), PrimitiveKind::Line);
        assert_eq!(p.primitive_index(), INDEX_MASK);
    }

    /// The primitive indices in the order the BVH stores them.
    fn stored_order(bvh: &PrimitiveBvh, g: &Geometry) -> Vec<u32> {
        let mut all = Record::default();
        bvh.for_each_candidate(g, |_| true, &mut all);
        all.0.iter().map(|(_, _, p)| *p).collect()
    }

    #[test]
    fn a_refit_keeps_the_tree_and_holds_every_moved_primitive() {
        // A wavy grid of triangles (a triangle list) and the same as lines and points.
        let n = 24;
        let vertices: Vec<Vec3> = (0..n * n)
            .map(|i| Vec3::new((i % n) as f32, ((i * 7) % 3) as f32, (i / n) as f32))
            .collect();
        let mut indices = Vec::new();
        for y in 0..n - 1 {
            for x in 0..n - 1 {
                let k = (y * n + x) as u32;
                indices.extend([
                    k,
                    k + 1,
                    k + n as u32,
                    k + 1,
                    k + n as u32 + 1,
                    k + n as u32,
                ]);
            }
        }
        let triangles = Geometry::new(vertices.clone())
            .with_primitive_set(PrimitiveSet::draw_elements_u32(
                PrimitiveMode::Triangles,
                indices,
            ))
            .unwrap();
        let lines = Geometry::new(vertices)
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::LineStrip, 0, 200))
            .unwrap()
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 200, 100))
            .unwrap();
        for mut g in [triangles, lines] {
            let mut bvh = PrimitiveBvh::build(&g).unwrap();
            let before = stored_order(&bvh, &g);
            // Mirrored in x and lifted: a rebuild would order the leaves afresh.
            for v in g.vertices_mut() {
                *v = Vec3::new(-v.x * 2.0, v.y + 10.0, v.z);
            }
            assert!(bvh.refit(&g));
            assert_eq!(stored_order(&bvh, &g), before, "the same tree");
            // Every primitive lies in every box on its path (a probe box around each
            // primitive's corners finds it).
            let mut corners = Record::default();
            g.accept_functor(&mut corners);
            struct Boxes(Vec<Aabb>);
            impl PrimitiveFunctor for Boxes {
                fn point(&mut self, v: Vec3, _: u32, _: u32) {
                    self.0.push(Aabb::from_points(&[v]));
                }
                fn line(&mut self, v: [Vec3; 2], _: [u32; 2], _: u32) {
                    self.0.push(Aabb::from_points(&v));
                }
                fn triangle(&mut self, v: [Vec3; 3], _: [u32; 3], _: u32) {
                    self.0.push(Aabb::from_points(&v));
                }
            }
            let mut boxes = Boxes(Vec::new());
            g.accept_functor(&mut boxes);
            assert_eq!(boxes.0.len(), corners.0.len());
            for (b, (_, _, p)) in boxes.0.iter().zip(&corners.0) {
                let mut found = Record::default();
                bvh.for_each_candidate(&g, |node| node.intersects(b), &mut found);
                assert!(found.0.iter().any(|(_, _, q)| q == p), "primitive {p} lost");
            }
            assert_eq!(bvh.bounds(), {
                let mut all = Aabb::EMPTY;
                boxes.0.iter().for_each(|b| all.grow(b));
                all
            });
        }
        // A vertex made NaN would take its primitives out of the BVH, one made finite
        // again would bring them back: refused both ways (a rebuild sees them right).
        let mut g = Geometry::new((0..9).map(|i| Vec3::splat(i as f32)).collect())
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 9))
            .unwrap();
        let mut bvh = PrimitiveBvh::build(&g).unwrap();
        g.vertices_mut()[4].y = f32::NAN;
        assert!(!bvh.refit(&g));
        let mut skipping = PrimitiveBvh::build(&g).unwrap();
        assert_eq!(skipping.len(), 2);
        g.vertices_mut()[4].y = 4.0;
        assert!(!skipping.refit(&g));
        assert_eq!(PrimitiveBvh::build(&g).unwrap().len(), 3);
        // Another geometry's vertices (too few) cannot be read: refused.
        let tiny = Geometry::new(vec![Vec3::ZERO; 3]);
        let g = Geometry::new((0..9).map(|i| Vec3::splat(i as f32)).collect())
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 0, 9))
            .unwrap();
        let mut bvh = PrimitiveBvh::build(&g).unwrap();
        assert!(!bvh.refit(&tiny));
    }

    #[test]
    fn a_refit_takes_only_the_primitive_sets_it_was_built_over() {
        let grid = |sets: &[(u32, u32)]| {
            let vertices = (0..12).map(|i| Vec3::new(i as f32, (i % 2) as f32, 0.0));
            let mut g = Geometry::new(vertices.collect());
            for &(first, count) in sets {
                let set = PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, first, count);
                g.add_primitive_set(set).unwrap();
            }
            g
        };
        let mut g = grid(&[(0, 6), (6, 6)]);
        let mut bvh = PrimitiveBvh::build(&g).unwrap();
        // A clone holds the same sets: its moved vertices are refitted.
        let mut clone = g.clone();
        clone.vertices_mut()[0].z = 3.0;
        assert!(bvh.refit(&clone));
        assert_eq!(bvh.bounds().max.z, 3.0);
        // Another geometry with sets of the same shape but other vertex indices: every
        // index is readable, yet the stored primitives are not its own.
        assert!(!bvh.refit(&grid(&[(6, 6), (0, 6)])));
        // A set removed and put back (the same primitives, but the geometry cannot tell)
        // and a set added are refused alike.
        let mut bvh = PrimitiveBvh::build(&g).unwrap();
        let set = g.remove_primitive_set(1).unwrap();
        g.add_primitive_set(set).unwrap();
        assert_eq!(g, grid(&[(0, 6), (6, 6)]), "equal, whatever their history");
        assert!(!bvh.refit(&g));
        let mut bvh = PrimitiveBvh::build(&g).unwrap();
        assert!(bvh.refit(&g));
        g.add_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 0, 3))
            .unwrap();
        assert!(!bvh.refit(&g));
    }
}
