//! The primitive functor: the output sink drawables decompose their primitives into.

use glam::Vec3;

/// Receives a drawable's primitives one at a time, in the drawable's local frame.
///
/// `indices` are positions in the drawable's vertex array; `primitive_index` is the
/// primitive's position in the drawable, counted across all its primitive sets in
/// order, degenerate primitives included (OSG's rule). A quad arrives as two
/// triangles with the same primitive index. Every method has an empty default, so a
/// functor implements only what it cares about.
///
/// ```
/// use scene_intersect::drawable::{Drawable, Geometry, PrimitiveFunctor, PrimitiveMode, PrimitiveSet};
/// use glam::Vec3;
///
/// struct CountTriangles(usize);
/// impl PrimitiveFunctor for CountTriangles {
///     fn triangle(&mut self, _v: [Vec3; 3], _i: [u32; 3], _p: u32) {
///         self.0 += 1;
///     }
/// }
///
/// let square = Geometry::new(vec![Vec3::ZERO, Vec3::X, Vec3::new(1.0, 1.0, 0.0), Vec3::Y])
///     .with_primitive_set(PrimitiveSet::draw_arrays(PrimitiveMode::Quads, 0, 4))?;
/// let mut count = CountTriangles(0);
/// square.accept(&mut count);
/// assert_eq!(count.0, 2);
/// # Ok::<(), scene_intersect::graph::GraphError>(())
/// ```
pub trait PrimitiveFunctor {
    /// A point primitive.
    fn point(&mut self, vertex: Vec3, index: u32, primitive_index: u32) {
        let _ = (vertex, index, primitive_index);
    }
    /// A line primitive.
    fn line(&mut self, vertices: [Vec3; 2], indices: [u32; 2], primitive_index: u32) {
        let _ = (vertices, indices, primitive_index);
    }
    /// A triangle primitive (or half of a quad).
    fn triangle(&mut self, vertices: [Vec3; 3], indices: [u32; 3], primitive_index: u32) {
        let _ = (vertices, indices, primitive_index);
    }
}
