//! Drawables: the leaves of the scene graph that hold primitives.
//!
//! * [`Drawable`] is the trait a renderer implements to expose its own meshes without
//!   copying them; [`Geometry`] is the built-in implementation.
//! * [`PrimitiveSet`] / [`PrimitiveMode`] describe which vertices form which primitives,
//!   in every GL mode OSG supports.
//! * [`PrimitiveFunctor`] is the output sink: [`decompose_primitive_set`] turns any
//!   primitive set into `point` / `line` / `triangle` calls with OSG's winding and
//!   primitive-index counting.

mod decompose;
mod geometry;
mod primitive_functor;
mod primitive_mode;
mod primitive_set;

pub use decompose::decompose_primitive_set;
pub use geometry::Geometry;
pub use primitive_functor::PrimitiveFunctor;
pub use primitive_mode::PrimitiveMode;
pub use primitive_set::{Indices, PrimitiveSet};

use crate::bounding::BoundingBox;
use glam::Vec3;

/// Something with primitives in its own local frame: a mesh of the scene.
///
/// Implement it for a renderer's own mesh type so its triangles are intersected where
/// they already are. The scene graph caches [`Drawable::bounding_box`] and, once the
/// acceleration module builds them, structures derived from [`Drawable::accept`]; it
/// invalidates them whenever the drawable is reached through
/// [`SceneGraph::drawable_mut`](crate::graph::SceneGraph::drawable_mut).
///
/// `accept` must emit the same primitives, with the same primitive indices, every time
/// it is called while the drawable is unchanged.
pub trait Drawable: Send + Sync + 'static {
    /// Feeds every primitive to `functor`, in the drawable's local frame.
    fn accept(&self, functor: &mut dyn PrimitiveFunctor);

    /// A box holding every primitive. The default collects it through [`Drawable::accept`].
    fn bounding_box(&self) -> BoundingBox {
        struct Bounds(BoundingBox);
        impl PrimitiveFunctor for Bounds {
            fn point(&mut self, v: Vec3, _i: u32, _p: u32) {
                self.0.expand_by_point(v.as_dvec3());
            }
            fn line(&mut self, v: [Vec3; 2], _i: [u32; 2], _p: u32) {
                v.iter().for_each(|v| self.0.expand_by_point(v.as_dvec3()));
            }
            fn triangle(&mut self, v: [Vec3; 3], _i: [u32; 3], _p: u32) {
                v.iter().for_each(|v| self.0.expand_by_point(v.as_dvec3()));
            }
        }
        let mut b = Bounds(BoundingBox::EMPTY);
        self.accept(&mut b);
        b.0
    }

    /// This drawable as the built-in [`Geometry`], if it is one.
    fn as_geometry(&self) -> Option<&Geometry> {
        None
    }

    /// This drawable as a mutable [`Geometry`], if it is one.
    fn as_geometry_mut(&mut self) -> Option<&mut Geometry> {
        None
    }
}
