//! [`Geometry`], the built-in drawable: vertex positions plus primitive sets.

use std::sync::atomic::{AtomicU64, Ordering};

use glam::Vec3;

use super::{decompose_primitive_set, Drawable, PrimitiveFunctor, PrimitiveSet};
use crate::bounding::BoundingBox;
use crate::graph::GraphError;

/// The built-in drawable, OSG's `osg::Geometry` reduced to what intersection needs:
/// `f32` vertex positions in the drawable's local frame and a list of primitive sets.
///
/// Every primitive set is checked when it is added: an index past the vertex array is
/// an [`GraphError::IndexOutOfRange`]. Vertices that are not finite are kept (so
/// vertex indices stay those of the source) but every primitive reading one is skipped
/// by [`Drawable::accept`], still counted in the primitive index;
/// [`Geometry::non_finite_vertex_count`] tells how many there are.
///
/// ```
/// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
/// use glam::Vec3;
/// let tri = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::Y])
///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 0, 3))?;
/// assert_eq!(tri.primitive_count(), 1);
/// // An index past the three vertices is refused.
/// let bad = Geometry::new(vec![Vec3::ZERO])
///     .with_primitive_set(PrimitiveSet::draw_elements_u32(PrimitiveMode::Points, vec![3]));
/// assert!(bad.is_err());
/// # Ok::<(), scene_intersect::graph::GraphError>(())
/// ```
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Geometry {
    vertices: Vec<Vec3>,
    primitive_sets: Vec<PrimitiveSet>,
    topology: Topology,
}

/// Names the primitive sets a [`Geometry`] holds, among every geometry of the process:
/// a fresh value for every new geometry and at every change of its sets, copied by
/// clones (which hold the same sets). So a structure built over a geometry's primitives
/// ([`PrimitiveBvh`](crate::accel::PrimitiveBvh)) can tell whether a geometry it is
/// handed holds the very primitives it stores, whatever happened to the geometry
/// meanwhile, even when it was overwritten by another one. Left out of equality: two
/// geometries are equal when their vertices and sets are.
#[derive(Clone, Copy, Debug)]
struct Topology(u64);

impl Topology {
    fn fresh() -> Topology {
        static NEXT: AtomicU64 = AtomicU64::new(1);
        Topology(NEXT.fetch_add(1, Ordering::Relaxed))
    }
}

impl Default for Topology {
    fn default() -> Self {
        Topology::fresh()
    }
}

impl PartialEq for Topology {
    fn eq(&self, _: &Topology) -> bool {
        true
    }
}

impl Geometry {
    /// A geometry with these vertices and no primitive set yet.
    pub fn new(vertices: Vec<Vec3>) -> Self {
        Geometry {
            vertices,
            primitive_sets: Vec::new(),
            topology: Topology::fresh(),
        }
    }

    /// Names the geometry's primitive sets as they are now (see `Topology`): equal
    /// values mean the same sets.
    pub(crate) fn topology(&self) -> u64 {
        self.topology.0
    }

    /// Builder form of [`Geometry::add_primitive_set`].
    pub fn with_primitive_set(mut self, set: PrimitiveSet) -> Result<Self, GraphError> {
        self.add_primitive_set(set)?;
        Ok(self)
    }

    /// Appends a primitive set after checking that every vertex it reads exists.
    pub fn add_primitive_set(&mut self, set: PrimitiveSet) -> Result<(), GraphError> {
        check_range(&set, self.primitive_sets.len(), self.vertices.len())?;
        self.primitive_sets.push(set);
        self.topology = Topology::fresh();
        Ok(())
    }

    /// Removes and returns the primitive set at `index`, or `None` past the end.
    pub fn remove_primitive_set(&mut self, index: usize) -> Option<PrimitiveSet> {
        let removed =
            (index < self.primitive_sets.len()).then(|| self.primitive_sets.remove(index));
        if removed.is_some() {
            self.topology = Topology::fresh();
        }
        removed
    }

    /// The vertex positions.
    pub fn vertices(&self) -> &[Vec3] {
        &self.vertices
    }

    /// The vertex positions, editable in place (their number cannot change this way, so
    /// every primitive set stays valid).
    pub fn vertices_mut(&mut self) -> &mut [Vec3] {
        &mut self.vertices
    }

    /// Replaces the vertex array; refused (and nothing changed) if a primitive set would
    /// then read past its end.
    pub fn set_vertices(&mut self, vertices: Vec<Vec3>) -> Result<(), GraphError> {
        for (i, set) in self.primitive_sets.iter().enumerate() {
            check_range(set, i, vertices.len())?;
        }
        self.vertices = vertices;
        Ok(())
    }

    /// The primitive sets, in drawing order.
    pub fn primitive_sets(&self) -> &[PrimitiveSet] {
        &self.primitive_sets
    }

    /// The number of primitives all sets count together (the primitive index range).
    pub fn primitive_count(&self) -> usize {
        self.primitive_sets
            .iter()
            .map(|s| s.primitive_count())
            .sum()
    }

    /// Whether a primitive set draws triangles or quads (see
    /// [`PrimitiveMode::emits_triangles`](super::PrimitiveMode::emits_triangles)): when
    /// none does, the geometry holds only points and lines.
    ///
    /// ```
    /// use glam::Vec3;
    /// use scene_intersect::drawable::{Geometry, PrimitiveMode, PrimitiveSet};
    ///
    /// let posts = Geometry::new(vec![Vec3::ZERO, Vec3::Y])
    ///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Lines, 0, 2))?;
    /// assert!(!posts.emits_triangles());
    /// # Ok::<(), scene_intersect::graph::GraphError>(())
    /// ```
    pub fn emits_triangles(&self) -> bool {
        self.primitive_sets
            .iter()
            .any(|s| s.mode().emits_triangles())
    }

    /// How many vertices are NaN or infinite (their primitives are skipped).
    pub fn non_finite_vertex_count(&self) -> usize {
        self.vertices.iter().filter(|v| !v.is_finite()).count()
    }

    /// [`Drawable::accept`] without dynamic dispatch of the functor.
    pub fn accept_functor<F: PrimitiveFunctor + ?Sized>(&self, functor: &mut F) {
        let mut next = 0u32;
        for set in &self.primitive_sets {
            next = next.wrapping_add(decompose_primitive_set(&self.vertices, set, next, functor));
        }
    }
}

fn check_range(
    set: &PrimitiveSet,
    set_index: usize,
    vertex_count: usize,
) -> Result<(), GraphError> {
    let end = set.vertex_index_end();
    if end > vertex_count as u64 {
        return Err(GraphError::IndexOutOfRange {
            set: set_index,
            index: end - 1,
            vertex_count,
        });
    }
    Ok(())
}

impl Drawable for Geometry {
    fn accept(&self, functor: &mut dyn PrimitiveFunctor) {
        self.accept_functor(functor);
    }

    /// Bounds of the vertices the primitive sets actually read would be tighter, but every
    /// vertex is usually read; the box holds all finite vertices.
    fn bounding_box(&self) -> BoundingBox {
        if self.primitive_sets.is_empty() {
            return BoundingBox::EMPTY;
        }
        BoundingBox::from_points(&self.vertices)
    }

    fn as_geometry(&self) -> Option<&Geometry> {
        Some(self)
    }

    fn as_geometry_mut(&mut self) -> Option<&mut Geometry> {
        Some(self)
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::drawable::{Indices, PrimitiveMode};

    #[test]
    fn out_of_range_sets_are_refused() {
        let mut g = Geometry::new(vec![Vec3::ZERO; 4]);
        assert!(g
            .add_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Triangles, 2, 3))
            .is_err());
        assert!(g
            .add_primitive_set(PrimitiveSet::DrawElements {
                mode: PrimitiveMode::Lines,
                indices: Indices::U16(vec![0, 4])
            })
            .is_err());
        assert!(g
            .add_primitive_set(PrimitiveSet::DrawArrayLengths {
                mode: PrimitiveMode::LineStrip,
                first: 1,
                lengths: vec![2, 2]
            })
            .is_err());
        // u32 overflow of first + count is caught, not wrapped.
        assert!(g
            .add_primitive_set(PrimitiveSet::draw_arrays(
                PrimitiveMode::Points,
                u32::MAX,
                2
            ))
            .is_err());
        assert!(g.primitive_sets().is_empty());
        g.add_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, 4))
            .unwrap();
        // Shrinking the vertex array below what the quad reads is refused.
        assert!(g.set_vertices(vec![Vec3::ZERO; 3]).is_err());
        assert_eq!(g.vertices().len(), 4);
    }

    #[test]
    fn primitive_index_runs_across_sets() {
        struct Last(Vec<u32>);
        impl PrimitiveFunctor for Last {
            fn line(&mut self, _v: [Vec3; 2], _i: [u32; 2], p: u32) {
                self.0.push(p);
            }
            fn triangle(&mut self, _v: [Vec3; 3], _i: [u32; 3], p: u32) {
                self.0.push(p);
            }
        }
        let g = Geometry::new((0..6).map(|i| Vec3::new(i as f32, 1.0, 0.0)).collect())
            .with_primitive_set(PrimitiveSet::draw_arrays(
                PrimitiveMode::TriangleStrip,
                0,
                4,
            ))
            .unwrap()
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Lines, 0, 4))
            .unwrap();
        let mut l = Last(vec![]);
        g.accept(&mut l);
        assert_eq!(l.0, vec![0, 1, 2, 3]);
        assert_eq!(g.primitive_count(), 4);
    }

    #[test]
    fn bounding_box_skips_non_finite() {
        let g = Geometry::new(vec![Vec3::ZERO, Vec3::splat(f32::INFINITY), Vec3::ONE])
            .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Points, 0, 3))
            .unwrap();
        let b = g.bounding_box();
        assert_eq!(b.max, glam::DVec3::ONE);
        assert_eq!(g.non_finite_vertex_count(), 1);
    }
}
