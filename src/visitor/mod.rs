//! The intersection visitor: traversal of the scene graph for an intersector, with node
//! masks, LOD / Switch selection, culling, local frames and coordinate frames.

mod batch;
mod coordinate_frame;
mod frame_context;
mod index_context;
mod intersection_visitor;
mod intersector;
mod met_instances;

pub use coordinate_frame::{ClipDepth, CoordinateFrame, Viewport};
pub use frame_context::{FrameContext, FrameMatrices};
pub use index_context::IndexContext;
pub use intersection_visitor::{IntersectionVisitor, LodSelection};
pub use intersector::{DrawableContext, IntersectionLimit, Intersector};
